// PLUR's own derived fields for a list of statements. stdin: [statement], stdout: [[content_hash, summary|null]].
import { computeContentHash, autoSummary } from '@plur-ai/core'
import { readFileSync } from 'node:fs'

const statements = JSON.parse(readFileSync(0, 'utf8'))
process.stdout.write(JSON.stringify(statements.map((s) => [computeContentHash(s), autoSummary(s) ?? null])))
