import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingMessage } from 'node:http'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'

/** Whether `host` is on the allow-list: exact names, or `*.domain` for its subdomains (not the domain itself). */
export function hostAllowed(host: string, allow: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '')
  return allow.some((entry) => {
    const e = entry.toLowerCase().trim()
    if (e.startsWith('*.')) return h.endsWith(e.slice(1)) && h.length > e.length - 1
    return h === e
  })
}

/** A running filtering proxy: a Unix socket to bind into the sandbox. */
export interface ConnectProxy {
  dir: string
  socketPath: string
  /** The loopback port, when listening on one (sandbox-exec, which can allow one port). */
  port: number | undefined
  /** Hosts asked for and refused, for the result. */
  refused: string[]
  close(): Promise<void>
}

/**
 * An HTTP CONNECT proxy on a Unix socket: tunnels to hosts on the
 * allow-list, answers 403 to the rest (deny by default). Inside the
 * sandbox, which has no network of its own, socat bridges 127.0.0.1:3128 to
 * this socket and HTTPS_PROXY points at it.
 */
export async function startConnectProxy(
  allow: readonly string[],
  listenOn: 'unix' | 'loopback' = 'unix',
): Promise<ConnectProxy> {
  const dir = await mkdtemp(path.join(tmpdir(), 'myc-proxy-'))
  const socketPath = path.join(dir, 'proxy.sock')
  const refused: string[] = []
  const sockets = new Set<Socket>()
  const server = createServer((_req, res) => {
    res
      .writeHead(405, { 'content-type': 'text/plain' })
      .end('myc proxy: only CONNECT tunnels are served (use https:// or curl -p)\n')
  })
  server.on('clientError', (_error, socket) => socket.destroy())
  server.on('connect', (req: IncomingMessage, client: Socket) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    // A peer that resets must not take myc down with an unhandled error.
    client.on('error', () => client.destroy())
    const [host = '', portText = '443'] = (req.url ?? '').replace(/^\[|\](?=:)/g, '').split(/:(?=\d+$)/)
    if (!hostAllowed(host, allow)) {
      refused.push(host)
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nmyc sandbox: ${host} is not in sandbox.network.allow\n`,
      )
      return
    }
    const upstream = connect(Number(portText), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      upstream.pipe(client)
      client.pipe(upstream)
    })
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'))
    client.on('error', () => upstream.destroy())
    client.on('close', () => upstream.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    if (listenOn === 'unix') server.listen(socketPath, resolve)
    else server.listen(0, '127.0.0.1', resolve)
  })
  const address = server.address()
  return {
    dir,
    socketPath,
    port: typeof address === 'object' && address ? address.port : undefined,
    refused,
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** Port the bridge listens on inside the sandbox. */
const PROXY_PORT = 3128
/** Mount point of the proxy's folder inside the sandbox. */
export const PROXY_DIR_INSIDE = '/run/myc-proxy'

/**
 * The argument vector that starts the socat bridge inside the sandbox and
 * then runs the command (a fixed script; the command's words are passed as
 * its arguments, never spliced into it).
 */
export function withProxyBridge(argv: readonly string[]): string[] {
  const script = `socat TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${PROXY_DIR_INSIDE}/proxy.sock & i=0; while [ $i -lt 50 ] && ! (echo > /dev/tcp/127.0.0.1/${PROXY_PORT}) 2>/dev/null; do sleep 0.02; i=$((i+1)); done; exec "$@"`
  return ['bash', '-c', script, 'myc-sandbox', ...argv]
}

/** Environment that sends HTTP(S) clients through the bridge (or straight to a loopback proxy port). */
export function proxyEnv(port = PROXY_PORT): Record<string, string> {
  const url = `http://127.0.0.1:${port}`
  return {
    HTTPS_PROXY: url,
    https_proxy: url,
    HTTP_PROXY: url,
    http_proxy: url,
    ALL_PROXY: url,
    NO_PROXY: '',
    no_proxy: '',
  }
}
