// A store of given statements in the shape PLUR's learn() writes, saved with PLUR's own saveEngrams.
// stdin: [{statement, scope, commitment, asserted_by, model, created_at}]. Uses PLUR_PATH. Prints {ids} in the order given.
import { Plur, saveEngrams, loadEngrams, computeContentHash } from '@plur-ai/core'
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'

const specs = JSON.parse(readFileSync(0, 'utf8'))
const root = process.env.PLUR_PATH
const plur = new Plur({ path: root, autoDiscover: false })
await plur.ready?.()
await plur.learn('Template statement for the shape', { type: 'behavioral', scope: 'project:web', commitment: 'draft' })
const [template] = loadEngrams(join(root, 'engrams.yaml'))
const perDay = {}
const engrams = specs.map((s) => {
  const t = JSON.parse(JSON.stringify(template))
  const ymd = s.created_at.slice(0, 10)
  perDay[ymd] = (perDay[ymd] || 0) + 1
  t.id = `ENG-${ymd}-${String(perDay[ymd]).padStart(3, '0')}`
  t.statement = s.statement
  t.content_hash = computeContentHash(s.statement)
  t.scope = s.scope
  t.commitment = s.commitment
  t.created_at = s.created_at; t.updated_at = s.created_at
  t.sources = [{ scope: s.scope, session_id: null, stored_at: s.created_at }]
  t.attribution = { asserted_by: s.asserted_by, runtime: { name: 'plur-core' } }
  if (s.model) t.attribution.model = { name: s.model }
  return t
})
const ids = engrams.map((e) => e.id)
engrams.sort((a, b) => a.id < b.id ? -1 : 1)
saveEngrams(join(root, 'engrams.yaml'), engrams, { allowShrink: true })
mkdirSync(join(root, 'history'), { recursive: true })
const months = {}
for (const e of engrams) {
  const ev = { event: 'engram_created', engram_id: e.id, timestamp: e.created_at, data: { type: e.type, scope: e.scope },
    actor: { asserted_by: e.attribution.asserted_by, runtime: { name: 'plur-core' } } }
  const m = e.created_at.slice(0, 7); (months[m] ||= []).push(JSON.stringify(ev))
}
for (const [m, lines] of Object.entries(months)) writeFileSync(join(root, 'history', `${m}.jsonl`), lines.join('\n') + '\n')
process.stdout.write(JSON.stringify({ ids }))
