/**
 * Whether a test's outside tool (bwrap, tmux, chromium, redis-server) is
 * here. Without it the test skips, except under MYC_REQUIRE_TOOLS=1 (set by
 * .ci/run), where a missing tool fails the file instead of skipping silently.
 */
export function requireTool(name: string, available: boolean): boolean {
  if (!available && process.env.MYC_REQUIRE_TOOLS === '1')
    throw new Error(`${name} is required (MYC_REQUIRE_TOOLS=1) but is not available here: install it (.ci/run does)`)
  return available
}
