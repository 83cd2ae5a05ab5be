/** Opens `url` in the person's browser (`xdg-open`, `open`, `start`); quiet when it cannot (the URL is printed too). */
export async function openBrowser(url: string): Promise<void> {
  const { spawn } = await import('node:child_process')
  const [command, args, verbatim] =
    process.platform === 'darwin'
      ? ['open', [url], false]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', `"${url}"`], true]
        : ['xdg-open', [url], false]
  try {
    const child = spawn(command, args as string[], {
      detached: true,
      stdio: 'ignore',
      windowsVerbatimArguments: verbatim as boolean,
    })
    child.on('error', () => {})
    child.unref()
  } catch {
    // The URL is on stderr: the person opens it.
  }
}
