// PLUR 0.21's duplicate-id rule applied to the engrams the real 0.20.0 loader parses (0.21 hashes the record as its
// schema parsed it). canonicalJson / freshDuplicateId / resolveDuplicateIds transcribed from PLUR 0.21
// packages/core/src/engrams.ts (a plur-ai/plur copy read without its commit).
// stdin: {file}; stdout: [{index, id, renamedFrom?, exactDuplicateOf?}] in file order. Or {values}: their canonicalJson.
import { loadEngrams } from '@plur-ai/core'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'

function canonicalJson(v) {
  if (Array.isArray(v)) return '[' + v.map(canonicalJson).join(',') + ']'
  if (v !== null && typeof v === 'object') {
    return '{' + Object.keys(v).filter(k => v[k] !== undefined).sort()
      .map(k => JSON.stringify(k) + ':' + canonicalJson(v[k])).join(',') + '}'
  }
  return JSON.stringify(v) ?? 'null'
}
function freshDuplicateId(id, entry, taken) {
  const h = createHash('sha256').update(canonicalJson(entry)).digest('hex').slice(0, 8)
  const base = `${id}-D${h}`
  let candidate = base
  for (let k = 2; taken.has(candidate); k++) candidate = `${base}-${k}`
  return candidate
}
const { file, values } = JSON.parse(readFileSync(0, 'utf8'))
if (values) { process.stdout.write(JSON.stringify(values.map(canonicalJson))); process.exit(0) }
const entries = loadEngrams(file) // 0.20 keeps every copy under its id
const taken = new Set(); const repeated = new Set()
for (const e of entries) { if (taken.has(e.id)) repeated.add(e.id); taken.add(e.id) }
const kept = new Map(); const out = []
entries.forEach((e, index) => {
  if (!repeated.has(e.id)) { out.push({ index, id: e.id }); return }
  const content = canonicalJson(e)
  const prior = kept.get(e.id)
  if (!prior) { kept.set(e.id, [[content, index]]); out.push({ index, id: e.id }); return }
  const same = prior.find(([c]) => c === content)
  if (same) { out.push({ index, id: e.id, exactDuplicateOf: same[1] }); return }
  const to = freshDuplicateId(e.id, e, taken)
  taken.add(to); prior.push([content, index])
  out.push({ index, id: to, renamedFrom: e.id })
})
process.stdout.write(JSON.stringify(out))
