import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** Seconds each test file took, as `npm run test:durations` recorded them (tests/durations.json). */
export type Durations = Readonly<Record<string, number>>

const RECORDED = path.join(import.meta.dirname, '..', 'durations.json')

/**
 * The longest files first, by their recorded durations; a file not
 * recorded (a new one) counts as the median. Ties keep the order given.
 */
export function longestFirst<T>(files: readonly T[], nameOf: (file: T) => string, durations: Durations): T[] {
  const known = Object.values(durations).sort((a, b) => a - b)
  const median = known.length > 0 ? known[Math.floor(known.length / 2)]! : 0
  const cost = (file: T) => durations[nameOf(file)] ?? median
  return [...files].sort((a, b) => cost(b) - cost(a))
}

/**
 * vitest starts the longest files first when its cache knows how long
 * each took. A fresh clone has no cache, and there it starts the largest
 * first, which put slow small files (a few e2e cases that take seconds)
 * at the end of the run with one worker busy. With no cached result for
 * some file, this orders by the durations recorded in the repo instead.
 */
export default class RecordedSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root
    const name = (file: TestSpecification) => path.relative(root, file.moduleId)
    const cached = files.every((f) => this.ctx.cache.getFileTestResults(`${f.project.name}:${name(f)}`))
    if (cached || !existsSync(RECORDED)) return super.sort(files)
    return longestFirst(files, name, JSON.parse(readFileSync(RECORDED, 'utf8')) as Durations)
  }
}
