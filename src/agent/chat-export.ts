import { codeSpan, fencedBlock, inlineText, quoteBlock, safeMarkdown } from '../markdown-text.js'
import { escapeHtml as escapeHtmlText, safeMarkdownRenderer } from '../markdown-html.js'
import { jsonText, terminalText } from '../terminal-text.js'
import type { ChatRecord } from './chat-store.js'

export type ExportFormat = 'md' | 'json' | 'html'
export const EXPORT_FORMATS: readonly ExportFormat[] = ['md', 'json', 'html']

type Block = {
  type: string
  text?: string
  name?: string
  input?: unknown
  content?: unknown
  tool_use_id?: string
  is_error?: boolean
}

const blocks = (content: unknown): Block[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as Block[]) : []

/** Text of a tool result's content (text blocks, others named). */
function resultText(content: unknown): string {
  return blocks(content)
    .map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`))
    .join('\n')
}

/**
 * Markdown for people: each turn's text, tool calls and results in fenced
 * blocks. Everything in it came from the chat record (the model, the
 * tools, the children): text is quoted (its headings and blocks stay in
 * the quote) and made safe ({@link safeMarkdown}: no links but http(s),
 * mailto and relative ones, no raw HTML), calls and results are fenced with
 * a backtick run longer than any in them, names are code spans, and control
 * characters are shown as escapes ({@link terminalText}).
 */
function toMarkdown(record: ChatRecord): string {
  const meta = record.meta
  const out = [
    `# Session ${inlineText(terminalText(`${record.id}${record.name ? ` (${record.name})` : ''}`))}`,
    '',
    inlineText(terminalText(`${meta.mode} · role ${meta.role ?? '-'} · model ${meta.model} · started ${meta.created}`)),
    '',
  ]
  for (const message of record.messages) {
    const who = inlineText(terminalText(String(message.role)))
    for (const b of blocks(message.content)) {
      if (b.type === 'text') out.push(`**${who}:**`, '', quoteBlock(safeMarkdown(terminalText(b.text ?? ''))), '')
      else if (b.type === 'tool_use')
        out.push(
          `**tool call** ${codeSpan(terminalText(String(b.name ?? '')))}`,
          '',
          fencedBlock(terminalText(JSON.stringify(b.input, null, 2) ?? 'null'), 'json'),
          '',
        )
      else if (b.type === 'tool_result')
        out.push(
          `**tool result**${b.is_error ? ' (error)' : ''}`,
          '',
          fencedBlock(terminalText(resultText(b.content))),
          '',
        )
    }
  }
  return `${out.join('\n').trimEnd()}\n`
}

/** JSON for programs: the same records as on disk (meta, then each message), one document. */
function toJson(record: ChatRecord): string {
  return `${jsonText({ meta: record.meta, name: record.name ?? null, activeSkills: record.activeSkills, usage: record.usage, messages: record.messages }, 2)}\n`
}

/** Text for the HTML export: control characters shown as escapes (a bidi override reorders a page too), then HTML-escaped. */
const escapeHtml = (text: string) => escapeHtmlText(terminalText(text))

/**
 * One self-contained HTML file: no external assets (styles inline, no
 * scripts), the model's text rendered from its Markdown and made safe
 * ({@link safeMarkdownRenderer}: raw HTML as text, no link but http(s),
 * mailto and relative ones, no image loaded), everything else escaped (what
 * the user typed is shown as typed), tool calls and results folded in
 * <details>.
 */
async function toHtml(record: ChatRecord): Promise<string> {
  const markdownToSafeHtml = await safeMarkdownRenderer()
  const parts: string[] = []
  for (const message of record.messages) {
    for (const b of blocks(message.content)) {
      if (b.type === 'text') {
        const text =
          message.role === 'assistant'
            ? `<div class="text md">${markdownToSafeHtml(b.text ?? '')}</div>`
            : `<div class="text">${escapeHtml(b.text ?? '')}</div>`
        parts.push(
          `<div class="msg ${escapeHtml(String(message.role))}"><div class="who">${escapeHtml(String(message.role))}</div>${text}</div>`,
        )
      } else if (b.type === 'tool_use')
        parts.push(
          `<details class="tool"><summary>tool call <code>${escapeHtml(b.name ?? '')}</code></summary><pre>${escapeHtml(JSON.stringify(b.input, null, 2))}</pre></details>`,
        )
      else if (b.type === 'tool_result')
        parts.push(
          `<details class="tool${b.is_error ? ' error' : ''}"><summary>tool result${b.is_error ? ' (error)' : ''}</summary><pre>${escapeHtml(resultText(b.content))}</pre></details>`,
        )
    }
  }
  const title = `Session ${record.id}${record.name ? ` (${record.name})` : ''}`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fafafa}
h1{font-size:1.3rem;margin:0 0 .2rem}.meta{color:#666;margin-bottom:1.5rem}
.msg{margin:.8rem 0;padding:.6rem .9rem;border-radius:8px}.text{white-space:pre-wrap}.text.md{white-space:normal}
.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}.md code{background:#f0f0f0;padding:0 .2em;border-radius:3px}
.md pre code{padding:0}.md table{border-collapse:collapse}.md th,.md td{border:1px solid #ccc;padding:.2rem .5rem}
.msg.user{background:#e8f0fe}.msg.assistant{background:#fff;border:1px solid #ddd}
.who{font-size:.75rem;text-transform:uppercase;color:#777;margin-bottom:.2rem}
details.tool{margin:.4rem 0 .4rem 1.5rem;border-left:3px solid #9bb;padding-left:.6rem}
details.tool.error{border-color:#c55}summary{cursor:pointer;color:#355}
pre{background:#f0f0f0;padding:.5rem;overflow:auto;white-space:pre-wrap}
</style></head>
<body><h1>${escapeHtml(title)}</h1><div class="meta">${escapeHtml(`${record.meta.mode} · role ${record.meta.role ?? '-'} · model ${record.meta.model} · started ${record.meta.created}`)}</div>
${parts.join('\n')}
</body></html>
`
}

export async function exportChatRecord(record: ChatRecord, format: ExportFormat): Promise<string> {
  return format === 'md' ? toMarkdown(record) : format === 'json' ? toJson(record) : toHtml(record)
}
