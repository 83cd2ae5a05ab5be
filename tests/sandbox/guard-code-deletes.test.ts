import { describe, expect, it } from 'vitest'
import { ShellGuard } from '../../src/sandbox/guard/guard.js'

const guard = new ShellGuard()

// Interpreter code that deletes, moves away or overwrites files itself, and code built at run time:
// [command line, rule, or null when allowed].
const cases: Array<[string, string | null]> = [
  ['python3 -c "import shutil; shutil.rmtree(\'/\')"', 'rm-recursive-critical'],
  ['python3 -c "import shutil; shutil.rmtree(\'/usr/lib\')"', 'delete-outside-workspace'],
  ['python3 -c "import os; os.remove(\'/etc/passwd\')"', 'delete-outside-workspace'],
  ['python3 -c "import os; os.unlink(\'/etc/hosts\')"', 'delete-outside-workspace'],
  ['python3 -c "import os; os.removedirs(p)"', 'destructive-dynamic-target'],
  ['python3 -c "from shutil import rmtree; rmtree(\'/etc\')"', 'rm-recursive-critical'],
  ["python3 -c \"import shutil; shutil.rmtree('/' + 'etc')\"", 'rm-recursive-critical'],
  ['python3 -c "import shutil; shutil.rmtree(\'/etc/\' + name)"', 'destructive-dynamic-target'],
  ['python3 -c "import shutil, sys; shutil.rmtree(sys.argv[1])" /', 'destructive-dynamic-target'],
  ["python3 -c \"__import__('shutil').rmtree('/')\"", 'rm-recursive-critical'],
  ['python3 -c "exec(\'import shutil; shutil.rmtree(\\"/\\")\')"', 'rm-recursive-critical'],
  ['python3 -c "import base64; exec(base64.b64decode(\'aW1wb3J0IG9z\'))"', 'interpreter-shell-dynamic'],
  ['python3 -c "m = __import__(name); m.run()"', 'interpreter-shell-dynamic'],
  ["python3 -c \"import shutil; getattr(shutil, 'rmtree')('x')\"", 'interpreter-shell-dynamic'],
  ['python3 -c "from pathlib import Path; Path(p).unlink()"', 'destructive-dynamic-target'],
  ['python3 <<EOF\nimport shutil\nshutil.rmtree("/etc")\nEOF', 'rm-recursive-critical'],
  ['node -e \'require("fs").rmSync("/", { recursive: true })\'', 'rm-recursive-critical'],
  ['node -e \'require("fs").unlinkSync("/etc/passwd")\'', 'delete-outside-workspace'],
  ['node -e \'require("fs").promises.rm(dir, { recursive: true })\'', 'destructive-dynamic-target'],
  ["node -e 'eval(process.argv[1])'", 'interpreter-shell-dynamic'],
  ['node -e \'const fs = require("fs"); fs["rmSync"]("x")\'', 'interpreter-shell-dynamic'],
  ['perl -MFile::Path -e \'rmtree("/")\'', 'rm-recursive-critical'],
  ['perl -MFile::Path=remove_tree -e \'remove_tree "/usr/lib"\'', 'delete-outside-workspace'],
  ['perl -e \'unlink "/etc/passwd"\'', 'delete-outside-workspace'],
  ["perl -e 'unlink $ARGV[0]' x", 'destructive-dynamic-target'],
  ["perl -e 'eval $ARGV[0]'", 'interpreter-shell-dynamic'],
  ['ruby -rfileutils -e \'FileUtils.rm_rf("/")\'', 'rm-recursive-critical'],
  ["ruby -rfileutils -e 'FileUtils.rm_rf(%w[build /usr/lib])'", 'delete-outside-workspace'],
  ['ruby -e \'File.delete("/etc/hosts")\'', 'delete-outside-workspace'],
  ['ruby -rfileutils -e \'FileUtils.send(:rm_rf, "/")\'', 'interpreter-shell-dynamic'],
  ['php -r \'unlink("/etc/passwd");\'', 'delete-outside-workspace'],
  ['lua -e \'os.remove("/etc/passwd")\'', 'delete-outside-workspace'],
  // aliases, functions used as values, moves and writes
  ['python3 -c "from shutil import rmtree as r; r(\'/\')"', 'rm-recursive-critical'],
  ['python3 -c "import shutil as s; s.rmtree(\'/usr/lib\')"', 'delete-outside-workspace'],
  ['python3 -c "import shutil; d = shutil.rmtree; d(\'/\')"', 'interpreter-shell-dynamic'],
  ['python3 -c "import os; list(map(os.remove, files))"', 'interpreter-shell-dynamic'],
  ["python3 -c \"import os; os.rename('/etc', 'x')\"", 'rm-recursive-critical'],
  ['python3 -c "import os; o = os; o.remove(\'/etc/x\')"', 'delete-outside-workspace'],
  ["python3 -c \"open('/etc/passwd', 'w')\"", 'delete-outside-workspace'],
  ["python3 -c \"from pathlib import Path; Path('/etc/x').write_text('')\"", 'delete-outside-workspace'],
  ['node -e \'const { rmSync: r } = require("fs"); r("/")\'', 'interpreter-shell-dynamic'],
  ['node -e \'require("fs").writeFileSync("/etc/passwd", "")\'', 'delete-outside-workspace'],
  ['perl -e \'open(my $f, ">", "/etc/passwd")\'', 'delete-outside-workspace'],
  ['ruby -e \'File.write("/etc/passwd", "")\'', 'delete-outside-workspace'],
  ['php -r \'file_put_contents("/etc/passwd", "");\'', 'delete-outside-workspace'],
  ["python3 -c \"open('x.sh', 'w').write('rm -rf /')\"; sh x.sh", 'runs-written-program'],
  // benign twins
  ['python3 -c "import shutil; shutil.rmtree(\'./build\')"', null],
  ['python3 -c "import os; os.remove(\'out.txt\')"', null],
  ['python3 -c "print(__import__(\'os\').getcwd())"', null],
  ['python3 -c "import os; from shutil import rmtree; rmtree(\'./build\')"', null],
  ['python3 -c "print(open(\'/etc/passwd\').read())"', null],
  ["python3 -c \"a = ['x']; a.remove('x'); print(a)\"", null],
  ["python3 -c \"open('out.txt', 'w').write('x')\"", null],
  ['node -e \'const { rmSync } = require("fs"); rmSync("dist", { recursive: true })\'', null],
  ['node -e \'require("fs").writeFileSync("out.json", "{}")\'', null],
  ['perl -e \'open(my $f, "<", "/etc/passwd"); print <$f>\'', null],
  ['ruby -e \'puts File.read("/etc/passwd")\'', null],
  ['node -e \'require("fs").rmSync("dist", { recursive: true, force: true })\'', null],
  ['perl -MFile::Path -e \'rmtree("build")\'', null],
  ['ruby -rfileutils -e \'FileUtils.rm_rf("tmp/cache")\'', null],
]

describe("shell guard: interpreters' own delete calls", () => {
  it.each(cases)('%j → %s', async (command, rule) => {
    const verdict = await guard.check(command)
    if (rule === null) expect(verdict, JSON.stringify(verdict)).toMatchObject({ ok: true })
    else expect(verdict).toMatchObject({ ok: false, error: { rule } })
  })

  it('has blocked calls and allowed twins', () => {
    expect(cases.filter(([, r]) => r === null).length).toBeGreaterThan(5)
    expect(cases.filter(([, r]) => r !== null).length).toBeGreaterThan(20)
  })
})
