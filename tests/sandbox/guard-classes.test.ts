import { describe, expect, it } from 'vitest'
import { ShellGuard } from '../../src/sandbox/guard/guard.js'

const guard = new ShellGuard()

// Each class of destructive command, with benign twins that must stay allowed: [command line, rule, or null when allowed].
type Case = [string, string | null]

const classes: Record<string, Case[]> = {
  'targets held in variables, parameters, loops, substitutions and defaults': [
    ['f=/; rm -rf "$f"', 'rm-recursive-critical'],
    ['f=/usr/lib; rm -rf $f', 'delete-outside-workspace'],
    ['d=/etc; x="$d/nginx"; rm -rf "$x"', 'delete-outside-workspace'],
    ['a=(build /etc); rm -rf "${a[@]}"', 'rm-recursive-critical'],
    ['rm -rf "$1"', 'destructive-dynamic-target'],
    ['rm -rf -- "$@"', 'destructive-dynamic-target'],
    ['f() { rm -rf "$1"; }; f /', 'destructive-dynamic-target'],
    ['for d in / /etc; do rm -rf "$d"; done', 'rm-recursive-critical'],
    ['for d in build /var/lib; do rm -rf "$d"; done', 'delete-outside-workspace'],
    ['for d in $(ls); do rm -rf "$d"; done', 'destructive-dynamic-target'],
    ['while read f; do rm -rf "$f"; done < list', 'destructive-dynamic-target'],
    ['f=./build; while read f; do rm -rf "$f"; done < list', 'destructive-dynamic-target'],
    ['rm -rf $(cat list)', 'destructive-dynamic-target'],
    ['rm -rf "`cat list`"', 'destructive-dynamic-target'],
    ['rm -rf "${X:-/}"', 'destructive-dynamic-target'],
    ['X=./b; rm -rf "${X:-/}"', 'rm-recursive-critical'],
    ['rm -rf "$UNSET_DIR/build"', 'destructive-dynamic-target'],
    ['unset f; rm -rf "$f/"', 'rm-recursive-critical'],
    ['f=./x; for i in 1 2; do rm -rf "$f"; f=/; done', 'rm-recursive-critical'],
    ['if true; then f=./b; else f=/; fi; rm -rf "$f"', 'rm-recursive-critical'],
    ['cd / && rm -rf *', 'delete-outside-workspace'],
    ['cd /etc; rm -rf nginx', 'delete-outside-workspace'],
    ['cd .. && rm -rf x', 'delete-outside-workspace'],
    ['cd "$D" && rm -rf build', 'destructive-dynamic-target'],
    ['for d in a b; do rm -rf x; cd /; done', 'destructive-dynamic-target'],
    ["cd / && sh -c 'rm -rf *'", 'delete-outside-workspace'],
    ['rm -rf /{etc,usr}', 'rm-recursive-critical'],
    ['rm -rf /usr/{lib,share}', 'delete-outside-workspace'],
    ['rm -rf /e*', 'delete-outside-workspace'],
    ['rm -rf /?tc', 'delete-outside-workspace'],
    ['chmod -R 777 .*', 'delete-outside-workspace'],
    ['c="rm -rf /"; $c', 'dynamic-command'],
    ['x=rm; $x -rf /', 'rm-recursive-critical'],
    ['f=/etc/x; rm -rf "${f%/*}"', 'rm-recursive-critical'],
    ['f=/etc/nginx; rm -rf "${f#/etc}"', 'delete-outside-workspace'],
    ['f=/usr/lib/x; rm -rf "$(dirname "$f")"', 'delete-outside-workspace'],
    ['rm -rf "$(dirname "$0")/build"', 'destructive-dynamic-target'],
    ['printf -v f %s /; rm -rf "$f"', 'destructive-dynamic-target'],
    ['cd -- /etc && rm -rf x', 'delete-outside-workspace'],
    // benign twins
    ['f=./build; rm -rf "$f"', null],
    ['for d in build dist; do rm -rf "$d"; done', null],
    ['a=(build dist); rm -rf "${a[@]}"', null],
    ['rm -rf build{1..3} out/{a,b}', null],
    ['rm -rf build{1..100}', null],
    ['rm -rf build/*', null],
    ['cd src && rm -rf build', null],
    ['d=$(mktemp -d); rm -rf "$d"', null],
    ['rm -rf "/tmp/x.$$"', null],
    ['for f in *.log; do rm "$f"; done', null],
    ['x=rm; $x -f out.txt', null],
    ['for f in *.txt; do mv "$f" "${f%.txt}.md"; done', null],
    ['f=/usr/lib/x; rm -rf "$(basename "$f")"', null],
    ['f=./a/b; rm -rf "${f%/*}"', null],
  ],
  'subfolders of system folders and tilde forms': [
    ['rm -rf /usr/lib', 'delete-outside-workspace'],
    ['rm -rf /etc/nginx', 'delete-outside-workspace'],
    ['sudo rm -rf /var/lib/docker', 'delete-outside-workspace'],
    ['rm -rf ~root', 'delete-outside-workspace'],
    ['rm -rf ~+/..', 'delete-outside-workspace'],
    ['rm -rf ~', 'rm-recursive-critical'],
    ['rm -rf ~/projects', 'delete-outside-workspace'],
    ['chown -R me /usr/local/lib', 'delete-outside-workspace'],
    ['rm -rf ./a/../../x', 'delete-outside-workspace'],
    ['ls /usr/lib', null],
    ['cat /etc/passwd', null],
    ['rm -rf ./build', null],
    ['rm -rf /tmp/cache', null],
    ['rm -rf ~+/build', null],
  ],
  'deletion through links made on the spot': [
    ['ln -s /etc x; rm -rf x/', 'delete-outside-workspace'],
    ['ln -s / r && rm -rf r/*', 'delete-outside-workspace'],
    ['ln /etc/passwd p; > p', 'delete-outside-workspace'],
    ['ln -sf ../../etc up; rm -rf up/nginx', 'delete-outside-workspace'],
    ['ln -s /usr/lib; rm -rf lib/x', 'delete-outside-workspace'],
    ['ln -s /etc x; chmod -R 777 x', 'delete-outside-workspace'],
    ['ln -s "$T" x; rm -rf x/', 'destructive-dynamic-target'],
    ['ln -s src/lib l; rm -rf l/old', null],
    ['ln -s /tmp/cache c; rm -rf c/x', null],
    ['ln -s /etc x; rm x', null],
    ['ln -s /etc x; rm -rf x', null],
  ],
  'deletion by other commands': [
    ['rsync -a --delete ./src/ /etc/', 'delete-outside-workspace'],
    ['rsync -a --delete src/ /', 'delete-outside-workspace'],
    ['rsync -a --delete src/ host:/srv/app/', 'delete-outside-workspace'],
    ['rsync -a --remove-source-files /var/log/ ./logs/', 'delete-outside-workspace'],
    ['rsync -a --delete ./src/ "$DEST"', 'destructive-dynamic-target'],
    ['mv /etc /tmp/etc.bak', 'delete-outside-workspace'],
    ['mv ./build /usr/lib/x', 'delete-outside-workspace'],
    ['find / -delete', 'find-delete-critical'],
    ['find /usr/lib -name "*.so" -delete', 'delete-outside-workspace'],
    ['find /usr/lib -exec rm -rf {} +', 'delete-outside-workspace'],
    ['sed -i "s/x/y/" /etc/passwd', 'delete-outside-workspace'],
    ['echo x | sudo tee /etc/hosts', 'delete-outside-workspace'],
    ['rm -f /etc/*', 'delete-outside-workspace'],
    ['tar xzf x.tgz -C /', 'delete-outside-workspace'],
    ['tar --extract -f x.tar --directory=/usr/lib', 'delete-outside-workspace'],
    ['tar xf x.tar -P', 'destructive-dynamic-target'],
    ['unzip -o x.zip -d /etc', 'delete-outside-workspace'],
    ["perl -pi -e 's/a/b/' /etc/passwd", 'delete-outside-workspace'],
    ['rimraf /usr/lib', 'delete-outside-workspace'],
    ['find /usr/lib -exec rm {} +', 'delete-outside-workspace'],
    ["perl -pi -e 's/a/b/' /etc/passwd", 'delete-outside-workspace'],
    ["ruby -pi -e 'x' /etc/passwd", 'delete-outside-workspace'],
    ["gawk -i inplace '{ print }' /etc/passwd", 'delete-outside-workspace'],
    ['curl -sSLo /usr/local/bin/x https://x', 'delete-outside-workspace'],
    ['wget -O /etc/x https://x', 'delete-outside-workspace'],
    ['sort -o /etc/passwd x', 'delete-outside-workspace'],
    ['gcc -o /usr/bin/x a.c', 'delete-outside-workspace'],
    ['tar czf /etc/x.tgz src', 'delete-outside-workspace'],
    ['tar --create --file=/usr/lib/x src', 'delete-outside-workspace'],
    ['rm -rf C:/Windows', 'delete-outside-workspace'],
    ['git -C /etc clean -fdx', 'delete-outside-workspace'],
    ['git --work-tree=/ reset --hard', 'delete-outside-workspace'],
    ['npx rimraf /usr/lib', 'delete-outside-workspace'],
    ['tar xzf x.tgz -C ./vendor', null],
    ['unzip x.zip -d out', null],
    ["perl -pi -e 's/a/b/' notes.txt", null],
    ['npx rimraf dist', null],
    ['find . -exec rm {} +', null],
    ["perl -Mstrict -e 'print 1' /etc/passwd", null],
    ["awk '{ print }' /etc/passwd", null],
    ['curl -o out.json https://x', null],
    ['wget -O - https://x', null],
    ['sort x -o sorted.txt', null],
    ['gcc -o app a.c', null],
    ['tar -cf - src | gzip > out.tgz', null],
    ['tar -tvf x.tar', null],
    ['git clean -fdx', null],
    ['git -C sub clean -fdx', null],
    ['git -C /etc status', null],
    ['rsync -a --delete ./src/ ./backup/', null],
    ['mv build dist', null],
    ['find . -name "*.pyc" -delete', null],
    ['sed -i "s/x/y/" notes.txt', null],
    ['cp -r src /tmp/copy', null],
    ['echo x | tee -a build.log', null],
  ],
}

describe('shell guard: classes of destructive commands', () => {
  for (const [name, cases] of Object.entries(classes)) {
    describe(name, () => {
      it.each(cases)('%j → %s', async (command, rule) => {
        const verdict = await guard.check(command)
        if (rule === null) expect(verdict, JSON.stringify(verdict)).toMatchObject({ ok: true })
        else expect(verdict).toMatchObject({ ok: false, error: { rule } })
      })
    })
  }

  it('every class has blocked commands and allowed twins', () => {
    for (const cases of Object.values(classes)) {
      expect(cases.some(([, r]) => r === null)).toBe(true)
      expect(cases.some(([, r]) => r !== null)).toBe(true)
    }
  })
})
