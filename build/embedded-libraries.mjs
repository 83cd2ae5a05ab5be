// The libraries only a few runs use, kept out of build/myc-main.cjs and loaded
// on first use (src/embedded-module.ts): each is bundled on its own
// (build/embed.ts) and travels gzipped as `<name>.cjs.gz`, a file beside the
// bundle in the npm package (package.json "files" lists them) and an asset of
// the single executable (build/build-bin.mjs). Parsed with the rest, they
// slowed every start by 25-30 ms each; kept in the bundle as gzipped text, their
// 1.07 MB of base64 cost every process 1.7 MiB of memory (docs/benchmarks.md).

/** Each library's name and the module text it is bundled from. */
export const EMBEDDED_LIBRARIES = {
  // The agent (src/agent/anthropic-sdk.ts).
  'anthropic-sdk':
    "export { default as Anthropic } from '@anthropic-ai/sdk'; export { mcpContent, UnsupportedMCPValueError } from '@anthropic-ai/sdk/helpers/beta/mcp'",
  // `myc serve --http` with JWTs or Redis (src/http/http-deps.ts).
  'http-deps': "export * as jose from 'jose'; export { createClient as createRedisClient } from 'redis'",
  // An HTML export of a session (src/markdown-html.ts).
  marked: "export { Marked } from 'marked'",
  // Tracing, metrics or /metrics (src/telemetry/telemetry-deps.ts).
  'telemetry-deps':
    "export * as api from '@opentelemetry/api'; export * as core from '@opentelemetry/core'; export * as sdk from '@opentelemetry/sdk-trace'; export * as resources from '@opentelemetry/resources'; export { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'; export { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'; export * as metrics from '@opentelemetry/sdk-metrics'; export { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http'; export { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'; export * as prometheus from '@opentelemetry/exporter-prometheus'",
}

/** The file (in build/, beside the bundle) and the single executable's asset that hold a library, gzipped. */
const embeddedFile = (name) => `${name}.cjs.gz`

/**
 * Data few runs use, gzipped beside the bundle the same way: the shell guard's grammar
 * (src/sandbox/guard/grammar.ts), each file's name and where it is in node_modules. As base64
 * text in the bundle it was 354 KB of the source every process holds.
 */
export const EMBEDDED_DATA = {
  'tree-sitter.wasm.gz': 'web-tree-sitter/tree-sitter.wasm',
  'tree-sitter-bash.wasm.gz': 'tree-sitter-bash/tree-sitter-bash.wasm',
}

/** Every file beside the bundle, and asset of the executable: the libraries' and the data's. */
export const embeddedFiles = () => [...Object.keys(EMBEDDED_LIBRARIES).map(embeddedFile), ...Object.keys(EMBEDDED_DATA)]
