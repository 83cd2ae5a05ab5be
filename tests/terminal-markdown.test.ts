import { describe, expect, it } from 'vitest'
import { terminalMarkdown } from '../src/terminal-markdown.js'

const render = (text: string, colour = false) => {
  const md = terminalMarkdown({ colour })
  return md.write(text) + md.end()
}
/** Escape codes made visible: `<1>` for ESC [1m. */
const codes = (text: string) => text.replace(/\u001b\[(\d+)m/g, '<$1>')

describe('Markdown on a terminal', () => {
  it('shows no markup: bold, italic, strikethrough and code keep their text', () => {
    expect(render('Use **skills** and *roles*, not ~~tokens~~; run `myc init`.')).toBe(
      'Use skills and roles, not tokens; run `myc init`.',
    )
    expect(codes(render('Use **skills** and *roles*, not ~~tokens~~; run `myc init`.', true))).toBe(
      'Use <1>skills<22> and <3>roles<23>, not <9>tokens<29>; run <36>myc init<39>.',
    )
    expect(codes(render('**bold with `code` inside**', true))).toBe('<1>bold with <36>code<39> inside<22>')
  })

  it('leaves what is not markup as it is', () => {
    for (const text of ['2 * 3 * 4', 'snake_case_name and a__b__c', 'a ** b', '**unclosed', 'x_y_z', '`unclosed'])
      expect(render(text), text).toBe(text)
    expect(render('\\*not italic\\*')).toBe('*not italic*')
  })

  it('shows lists with bullets, headings bold, quotes and rules set off', () => {
    expect(render('# Title\n\n- one\n  * two\n1. first\n- [x] done\n- [ ] open\n> quoted **b**\n---\n')).toBe(
      'Title\n\n• one\n  • two\n1. first\n• ☑ done\n• ☐ open\n│ quoted b\n' + '─'.repeat(40) + '\n',
    )
    expect(codes(render('## Heading', true))).toBe('<1>Heading<22>')
  })

  it('shows a link as its text and its address; an autolink as its address', () => {
    expect(render('See [the docs](https://example.com/docs) or <https://example.com>.')).toBe(
      'See the docs (https://example.com/docs) or https://example.com.',
    )
    expect(render('[https://a.example](https://a.example) ![logo](https://a.example/logo.png)')).toBe(
      'https://a.example image: logo (https://a.example/logo.png)',
    )
    expect(render('[**bold** label](https://x.example/a_(b))')).toBe('bold label (https://x.example/a_(b))')
  })

  it('shows a fenced code block without its fences, set off, its text untouched', () => {
    expect(render('Run:\n```sh\nmyc **init**\n```\ndone')).toBe('Run:\n    myc **init**\ndone')
    expect(codes(render('```\ncode\n```', true))).toBe('<36>    code<39>\n')
  })

  it('streams: each line once it is complete, the rest at the end', () => {
    const md = terminalMarkdown({ colour: false })
    expect(md.write('Hello **wor')).toBe('')
    expect(md.write('ld**\n- it')).toBe('Hello world\n')
    expect(md.write('em\r')).toBe('')
    expect(md.write('\nlast')).toBe('• item\n')
    expect(md.end()).toBe('last')
    // Ended: a new reply starts outside any code block.
    expect(md.write('```\n')).toBe('')
    expect(md.end()).toBe('')
    expect(md.write('**fresh**\n')).toBe('fresh\n')
  })

  it('shows control characters as escapes, in text, code and addresses alike', () => {
    const shown = render('a\u001b]52;c;x\u0007 `\u001b[2J` [x](https://e.example/\u202e) **\u009b31m**', true)
    expect(shown).not.toMatch(/\u001b\]|\u0007|\u001b\[2J|\u202e|\u009b/)
    expect(shown).toContain('\\x1b]52;c;x\\x07')
    expect(shown).toContain('\\u202e')
  })
})
