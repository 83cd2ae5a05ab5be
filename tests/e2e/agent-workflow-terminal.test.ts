import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { failingWorkflow, workflowProject } from '../helpers/agent.js'
import { bundle } from '../helpers/e2e.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { requireTool } from '../helpers/tools.js'
import { Terminal } from '../helpers/terminal.js'
import { waitFor } from '../helpers/wait-for.js'

// myc workflow on a real terminal; the rest of it is tested in this process (tests/commands/agent-workflow.test.ts).

const hasBwrap = requireTool('bwrap', process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0)

describe.runIf(hasBwrap)('myc workflow (build/myc.cjs) on a terminal', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)
  it.runIf(hasTmux)(
    '--on-failure prompt on a terminal: shows the script, its exit code and the end of its stderr before asking to hand off',
    async () => {
      failingWorkflow(fake)
      const config = workflowProject()
      const term = new Terminal('wf-prompt')
      const { tmux } = term
      const screen = () => tmux('capture-pane', '-p', '-J', '-t', 'wf')
      try {
        term.open(
          'wf',
          `HOME=${path.dirname(config)} NO_COLOR=1 ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} workflow 'release it' --config ${config}; echo EXIT=$?; sleep 60`,
        )
        await waitFor(() => screen().includes('Hand off to adhoc to investigate? [y/n]'), 30_000, 'the question')
        const lines = screen()
          .split('\n')
          .map((l) => l.trimEnd())
        const asked = lines.findIndex((l) => l.includes('Hand off to adhoc'))
        const shown = lines.slice(0, asked).join('\n')
        expect(shown).toContain('myc: script scripts/release.sh --now of skill deploy failed: exit code 2')
        expect(shown).toMatch(/its stderr:\n {2}\| disk full$/)
        tmux('send-keys', '-t', 'wf', 'n', 'Enter')
        await waitFor(() => screen().includes('EXIT='), 30_000, 'the end')
        expect(screen()).toContain('EXIT=3')
      } finally {
        term.close()
      }
    },
    60_000,
  )
})
