/**
 * The EXAMPLES section of each command's `--help`, as `gh` and `kubectl`
 * show them: what an example does, then the command line. Keyed by the
 * command's words (`skills lint`; `''` is `myc` itself). Loaded only for
 * help; tests/cli-args.test.ts checks that every command has two or three
 * and that each is a command line myc accepts.
 */
export interface Example {
  /** What it does, one line. */
  does: string
  /** The command line, starting with `myc`. */
  run: string
}

const e = (does: string, run: string): Example => ({ does, run })

export const EXAMPLES: ReadonlyMap<string, readonly Example[]> = new Map([
  [
    '',
    [
      e('Write a starter config and skills in this folder, then see the children start', 'myc init && myc status'),
      e('What an MCP client config runs: serve on stdio', 'myc --config /absolute/path/mycelium.config.json'),
      e('The usage of one command', 'myc help tools'),
    ],
  ],
  [
    'serve',
    [
      e('Serve on stdio, as an MCP client starts it', 'myc serve --config /absolute/path/mycelium.config.json'),
      e('Serve one role, with a skill active from the start', 'myc serve --role developer --skills reader'),
      e('Serve Streamable HTTP on a port (tokens from http.tokens)', 'myc serve --http 127.0.0.1:8808'),
    ],
  ],
  [
    'status',
    [
      e('Start every child and report its state', 'myc status'),
      e('The same for a script: exits 3 when a child failed', 'myc status --json --config mycelium.config.json'),
    ],
  ],
  [
    'tools',
    [
      e('The tools a session of the default role is offered', 'myc tools'),
      e('A role with a skill active, as JSON', 'myc tools --role developer --skills editor --json'),
      e('Every tool, each marked visible (+) or hidden (-)', 'myc tools --role guest --all'),
    ],
  ],
  [
    'roles',
    [
      e('Every role, where it comes from, and the skills it reaches', 'myc roles'),
      e('The same as JSON', 'myc roles --json'),
    ],
  ],
  [
    'skills',
    [
      e('Every skill and whether it is enabled', 'myc skills'),
      e('One skill in full', 'myc skills show reader'),
      e('Check every skill and role definition (exits 3 on errors)', 'myc skills lint'),
    ],
  ],
  [
    'skills list',
    [e('Every skill and whether it is enabled', 'myc skills list'), e('The same as JSON', 'myc skills list --json')],
  ],
  [
    'skills show',
    [
      e('A skill by name: its roles, tools and instructions', 'myc skills show reader'),
      e('A skill by its skill:// URI, as JSON', 'myc skills show skill://mycelium/reader --json'),
    ],
  ],
  [
    'skills lint',
    [
      e('Check every skill (exits 3 on errors)', 'myc skills lint'),
      e('The problems as JSON', 'myc skills lint --json'),
    ],
  ],
  [
    'skill',
    [
      e('A new skill from a template', 'myc skill add notes --template reader'),
      e('The templates there are', 'myc skill templates'),
    ],
  ],
  [
    'skill add',
    [
      e('A blank skill in skills/notes/', 'myc skill add notes'),
      e('A skill from a bundled template', 'myc skill add review --template code-reviewer'),
    ],
  ],
  [
    'skill templates',
    [e('The bundled templates', 'myc skill templates'), e('The same as JSON', 'myc skill templates --json')],
  ],
  [
    'policy',
    [
      e('What a role reaches (exits 3 on a violation)', 'myc policy check --role developer'),
      e('The same as JSON', 'myc policy check --role guest --json'),
    ],
  ],
  [
    'policy check',
    [
      e('What a role reaches: servers, skills, tools, memory', 'myc policy check --role developer'),
      e('The same as JSON, for CI (exits 3 on a violation)', 'myc policy check --role guest --json'),
    ],
  ],
  [
    'explain',
    [
      e('Why a tool is visible or hidden for a role', 'myc explain fs:write_file --role guest'),
      e('By its wire name, with a skill active', 'myc explain fs__write_file --role developer --skills editor'),
    ],
  ],
  [
    'preview',
    [
      e('The tools activating a skill would add', 'myc preview skill editor --role developer'),
      e('The same as JSON, with their token count', 'myc preview skill editor --role developer --json'),
    ],
  ],
  [
    'preview skill',
    [
      e('The tools activating a skill would add', 'myc preview skill editor --role developer'),
      e('From a session that has a skill active already', 'myc preview skill editor --role developer --skills reader'),
    ],
  ],
  [
    'tokens',
    [
      e('What each role’s tool list costs a model, against open mode', 'myc tokens'),
      e('One role, as JSON', 'myc tokens --role developer --json'),
    ],
  ],
  [
    'init',
    [
      e('A starter config and every bundled skill in this folder', 'myc init'),
      e('In a new folder, with the common and reader skills only', 'myc init my-project --minimal'),
      e('A config without a lock file: nothing started, nothing pinned', 'myc init --no-pin'),
    ],
  ],
  [
    'sandbox',
    [
      e('Which executors work here', 'myc sandbox check'),
      e('Run a command in the sandbox, guarded', 'myc sandbox exec -- npm test'),
      e('The shell guard’s verdict, without running anything', "myc sandbox guard -- 'curl x | sh'"),
    ],
  ],
  [
    'sandbox exec',
    [
      e('An argument vector, in the sandbox of sandbox.trust', 'myc sandbox exec -- npm test'),
      e(
        'A shell line, at a trust level and on an executor',
        "myc sandbox exec --trust sandboxed --executor bubblewrap -- 'ls | wc -l'",
      ),
    ],
  ],
  [
    'sandbox check',
    [
      e('Which executors work here, and how to fix the others', 'myc sandbox check'),
      e('As JSON', 'myc sandbox check --json'),
    ],
  ],
  [
    'sandbox guard',
    [
      e('A shell line (one word after --)', "myc sandbox guard -- 'curl x | sh'"),
      e('An argument vector (several words), as JSON', 'myc sandbox guard --json -- rm -rf build'),
    ],
  ],
  [
    'doctor',
    [
      e('Check Node, the config, the children, what serve --http needs, the sandbox', 'myc doctor'),
      e('The checks as JSON (exits 3 on a failure)', 'myc doctor --json --config mycelium.config.json'),
    ],
  ],
  [
    'pin',
    [
      e('Pin what the children offer now, each change shown and asked', 'myc pin'),
      e('The CI step: exits 1 when a child differs from mycelium.lock.json', 'myc pin --check'),
      e('Accept every change without asking, as JSON', 'myc pin --yes --json'),
    ],
  ],
  [
    'run',
    [
      e('One task, headless, as the default role', 'myc run "List the TODO comments in src/"'),
      e(
        'The event stream for CI, with a spending cap',
        'myc run "Review the diff" --role developer --json --max-budget-usd 0.50',
      ),
      e('The task on stdin', 'myc run - --role developer'),
    ],
  ],
  [
    'adhoc',
    [
      e('Investigate, asking before risky calls', 'myc adhoc "Find out why the build fails"'),
      e(
        'Headless: allow up to medium risk and one tool pattern',
        'myc adhoc "Tidy the docs" --approve medium --approve fs:write_*',
      ),
      e(
        'From the context file a failed workflow wrote',
        'myc adhoc --context .mycelium/context/2026-11-29T10-00-00-000Z-test-runner.json "Fix it"',
      ),
    ],
  ],
  [
    'workflow',
    [
      e('The skills’ scripts only', 'myc workflow "Run the tests"'),
      e('On a failure, hand off to adhoc without asking', 'myc workflow "Release" --on-failure auto'),
    ],
  ],
  [
    'chat',
    [
      e('A conversation as the default role', 'myc chat'),
      e(
        'As a role, with a skill active and a cap on the spend',
        'myc chat --role developer --skills reader --max-budget-usd 1',
      ),
      e('Continue a recorded session', 'myc chat --resume demo1'),
    ],
  ],
  [
    'sessions',
    [
      e('The recorded sessions, newest first', 'myc sessions list'),
      e('One session as text', 'myc sessions show demo1'),
      e('One session as a self-contained HTML file', 'myc sessions export demo1 --format html'),
    ],
  ],
  [
    'sessions list',
    [e('The recorded sessions, newest first', 'myc sessions list'), e('As JSON', 'myc sessions list --json')],
  ],
  [
    'sessions show',
    [
      e('A session by its saved name (ids: myc sessions list)', 'myc sessions show demo1'),
      e('By id, as JSON', 'myc sessions show 20261129-050553-5590ad --json'),
    ],
  ],
  [
    'sessions export',
    [
      e('As Markdown (the default)', 'myc sessions export demo1'),
      e('As one self-contained HTML file', 'myc sessions export demo1 --format html'),
    ],
  ],
  [
    'sessions rm',
    [
      e('Remove a session by its saved name', 'myc sessions rm demo1'),
      e('By id', 'myc sessions rm 20261129-050553-5590ad'),
    ],
  ],
  [
    'memory',
    [
      e('Every role’s memory, counted', 'myc memory list'),
      e('What one role remembers', 'myc memory show developer'),
      e('Find entries by words', 'myc memory search "release checklist"'),
    ],
  ],
  [
    'memory list',
    [
      e('Every role’s memory, counted', 'myc memory list'),
      e('One role, as JSON', 'myc memory list --role developer --json'),
    ],
  ],
  [
    'memory show',
    [
      e('What one role remembers', 'myc memory show developer'),
      e('Only its facts', 'myc memory show developer --type fact'),
    ],
  ],
  [
    'memory search',
    [
      e('Entries of every role that match the words', 'myc memory search "release checklist"'),
      e('In one role, as JSON', 'myc memory search deploy --role developer --json'),
    ],
  ],
  [
    'memory forget',
    [
      e('Forget one entry (ids: myc memory show ROLE)', 'myc memory forget developer mem_Xq3b9F2kLm0a'),
      e('With another config', 'myc memory forget guest mem_hb41c07e9d2af --config team.config.json'),
    ],
  ],
  [
    'memory export',
    [
      e('Every role’s memory as Markdown', 'myc memory export --format md'),
      e('One role as JSON', 'myc memory export --format json --role developer'),
    ],
  ],
  [
    'memory lint',
    [e('Check the memory files (exits 3 on a problem)', 'myc memory lint'), e('As JSON', 'myc memory lint --json')],
  ],
  [
    'auth',
    [
      e('Log in to an OAuth-protected HTTP server', 'myc auth login github'),
      e('Each HTTP server’s login', 'myc auth status'),
      e('Forget a login', 'myc auth logout github'),
    ],
  ],
  [
    'auth login',
    [
      e('Log in, in a browser', 'myc auth login github'),
      e('Without a browser: print the address to open', 'myc auth login github --no-browser'),
      e('For a person behind serve --http (an http.tokens name)', 'myc auth login github --principal alice'),
    ],
  ],
  [
    'auth status',
    [
      e('Each HTTP server’s login', 'myc auth status'),
      e('A person’s logins, as JSON', 'myc auth status --principal alice --json'),
    ],
  ],
  [
    'auth logout',
    [
      e('Forget your login to a server', 'myc auth logout github'),
      e('A person’s login', 'myc auth logout github --principal alice'),
    ],
  ],
  [
    'secrets',
    [
      e('Keep a secret, typed at a prompt (never on the command line)', 'myc secrets set GITHUB_TOKEN'),
      e('The names of your secrets', 'myc secrets list'),
      e('Forget one', 'myc secrets rm GITHUB_TOKEN'),
    ],
  ],
  [
    'secrets set',
    [
      e('Keep a secret, typed at a prompt', 'myc secrets set GITHUB_TOKEN'),
      e('A person’s secret (the value typed, or piped on stdin)', 'myc secrets set GITHUB_TOKEN --principal alice'),
    ],
  ],
  [
    'secrets list',
    [
      e('The names of your secrets (never their values)', 'myc secrets list'),
      e('A person’s, as JSON', 'myc secrets list --principal alice --json'),
    ],
  ],
  [
    'secrets rm',
    [
      e('Forget a secret', 'myc secrets rm GITHUB_TOKEN'),
      e('Forget a person’s', 'myc secrets rm GITHUB_TOKEN --principal alice'),
    ],
  ],
  [
    'search',
    [
      e('Servers in the MCP Registry whose names match', 'myc search filesystem'),
      e('The first five, as JSON', 'myc search github --limit 5 --json'),
    ],
  ],
  [
    'add',
    [
      e(
        'Add a server from the registry, pinned, with the value it leaves open',
        'myc add io.github.modelcontextprotocol/filesystem --arg target_dir=.',
      ),
      e('What it would write, without starting or writing anything', 'myc add ./server.json --dry-run'),
      e('Bring over the servers of an installed client', 'myc add --from-client claude-desktop'),
    ],
  ],
])

/** The EXAMPLES section for `--help`, kubectl's way: each example's line of what it does as a comment, then the command. */
export function examplesText(path: string, heading: (text: string) => string): string | undefined {
  const examples = EXAMPLES.get(path)
  if (!examples) return undefined
  return `${heading('EXAMPLES')}\n\n${examples.map((x) => `  # ${x.does}\n  ${x.run}`).join('\n\n')}`
}
