import type * as Jose from 'jose'
import type { createClient } from 'redis'
import { lazyEmbedded } from '../embedded-module.js'

/** What `myc serve --http` uses of its heavier libraries: JWT checks, the Redis session store. */
export interface HttpDeps {
  jose: typeof Jose
  createRedisClient: typeof createClient
}

/**
 * Loads jose and node-redis on first use. Built, they are a gzipped file
 * beside the bundle compiled only here, as the Anthropic SDK is: parsed with
 * the rest, their 1.3 MB slowed every start (even `myc --version`) by ~30 ms,
 * for the few runs that serve HTTP with JWTs or Redis.
 */
export const loadHttpDeps: () => Promise<HttpDeps> = lazyEmbedded('http-deps', async () => {
  const [jose, redis] = await Promise.all([import('jose'), import('redis')])
  return { jose, createRedisClient: redis.createClient }
})
