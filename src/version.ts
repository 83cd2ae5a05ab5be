declare const __MYC_VERSION__: string

/** The package version, injected by esbuild at build time; `0.0.0-dev` when run from source. */
export const version: string = typeof __MYC_VERSION__ === 'string' ? __MYC_VERSION__ : '0.0.0-dev'
