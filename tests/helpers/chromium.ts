import { execFileSync, spawnSync } from 'node:child_process'
import { requireTool } from './tools.js'

/** The headless browser of this machine, if there is one (required under MYC_REQUIRE_TOOLS=1). */
export const chromium = ['chromium', 'chromium-browser', 'google-chrome'].find(
  (c) => spawnSync(c, ['--version']).status === 0,
)
requireTool('chromium', chromium !== undefined)

/** Renders `file` in headless Chromium at `width` x `height` and writes the PNG to `png`. */
export function screenshot(file: string, png: string, width: number, height: number): void {
  execFileSync(
    chromium!,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--hide-scrollbars',
      `--window-size=${width},${height}`,
      `--screenshot=${png}`,
      `file://${file}`,
    ],
    { timeout: 60_000, stdio: 'ignore' },
  )
}
