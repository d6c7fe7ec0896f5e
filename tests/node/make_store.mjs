// Generates a realistic PLUR store with the real PLUR: learn() for the shapes, saveEngrams() for bulk.
// stdin: {n, drafts_ratio, tensions, seed}. Uses PLUR_PATH. Prints {engrams, drafts, tensions}.
import { Plur, saveEngrams, loadEngrams, computeContentHash } from '@plur-ai/core'
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'

const req = JSON.parse(readFileSync(0, 'utf8')) || {}
const n = req.n ?? 100
const draftsRatio = req.drafts_ratio ?? 0.05
const nTensions = req.tensions ?? Math.max(2, Math.floor(n / 100))
let seed = req.seed ?? 1
// The default generator loses precision (the product exceeds 2^53) and cycles after a few hundred draws, so its
// stores repeat about 225 statements; rng "mulberry32" gives every engram its own statement (realistic for
// embedding figures, where identical content_hashes are embedded once). The default is kept for existing fixtures.
const lcg = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
const mulberry32 = () => {
  seed = (seed + 0x6D2B79F5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const rand = req.rng === 'mulberry32' ? mulberry32 : lcg
const pick = (xs) => xs[Math.floor(rand() * xs.length)]

const root = process.env.PLUR_PATH
const plur = new Plur({ path: root, autoDiscover: false })
await plur.ready?.()
// Realistic templates from learn() itself.
const t1 = await plur.learn('The CI pipeline uses Node 20 for all builds', { type: 'procedural', scope: 'project:web', domain: 'dev.ci', tags: ['ci'] })
const t2 = await plur.learn('Deploy freezes happen every Friday afternoon', { scope: 'project:web', commitment: 'draft', valid_from: '2026-01-01', valid_until: '2030-12-31' })
const templates = loadEngrams(join(root, 'engrams.yaml'))

const words = ('the a build deploy cache test suite runs uses prefers never always database migration schema api ' +
  'endpoint returns token rotates weekly logs retention config service worker queue retries timeout seconds ' +
  'staging production branch review merge release notes python node rust docker image tag version pinned ' +
  'lint format tabs spaces makefile readme docs owner team oncall alert threshold latency p95 memory ' +
  'café naïve 日本語 über — “quoted” it\'s 0936e75230430234 yes no on off null true 2026-01-01').split(' ')
const scopes = ['global', 'project:web', 'project:api', 'group:org/platform', 'user:alice']
const domains = ['dev.ci', 'dev.deploy', 'ops.oncall', 'dev.style', 'data.db', undefined]
const types = ['behavioral', 'procedural', 'architectural', 'terminological']
const models = ['claude-opus-4', 'gpt-5', 'qwen3-coder']
const engrams = []
const day0 = Date.UTC(2026, 0, 1)
const perDay = {}
for (let i = 0; i < n; i++) {
  const t = JSON.parse(JSON.stringify(templates[i % 2]))
  const day = new Date(day0 + Math.floor(rand() * 330) * 86400000)
  const ymd = day.toISOString().slice(0, 10)
  perDay[ymd] = (perDay[ymd] || 0) + 1
  t.id = `ENG-${ymd}-${String(perDay[ymd]).padStart(3, '0')}`
  const len = rand() < 0.15 ? 40 + Math.floor(rand() * 40) : 6 + Math.floor(rand() * 14)
  t.statement = Array.from({ length: len }, () => pick(words)).join(' ')
  t.statement = t.statement[0].toUpperCase() + t.statement.slice(1)
  if (rand() < 0.03) t.statement += '\nSecond line: see the runbook.'
  t.content_hash = computeContentHash(t.statement)
  t.scope = pick(scopes); t.type = pick(types)
  const d = pick(domains); if (d) t.domain = d; else delete t.domain
  t.tags = rand() < 0.5 ? [pick(['ci', 'deploy', 'style', 'db', 'oncall'])] : []
  const ts = new Date(day.getTime() + Math.floor(rand() * 86400000)).toISOString()
  t.created_at = ts; t.updated_at = ts
  t.sources = [{ scope: t.scope, session_id: rand() < 0.5 ? `sess-${Math.floor(rand() * 1e6)}` : null, stored_at: ts }]
  t.attribution = { asserted_by: pick(['agent:claude-code', 'agent:codex', 'unidentified']), runtime: { name: 'plur-core' } }
  if (rand() < 0.6) t.attribution.model = { name: pick(models) }
  t.commitment = rand() < draftsRatio ? 'draft' : pick(['leaning', 'leaning', 'decided', 'exploring', 'locked'])
  if (t.commitment !== 'locked') { delete t.locked_at; delete t.locked_reason }
  else { t.locked_at = ts; t.locked_reason = 'pinned by team' }
  t.status = rand() < 0.05 ? 'retired' : 'active'
  if (rand() < 0.1) {
    t.temporal = { learned_at: ts, valid_from: '2026-01-01', valid_until: pick(['2026-06-30', '2026-12-31', '2027-03-31']) }
  } else delete t.temporal
  t.activation = { retrieval_strength: Math.round(rand() * 100) / 100, storage_strength: 1, frequency: Math.floor(rand() * 5), last_accessed: ymd }
  t.injection_count = Math.floor(rand() * 20)
  if (rand() < 0.05) t.x_custom = { note: 'kept by PLUR at top level' }
  engrams.push(t)
}
engrams.sort((a, b) => a.id < b.id ? -1 : 1)
saveEngrams(join(root, 'engrams.yaml'), engrams, { allowShrink: true })
// Round-trip once through PLUR's own loader so keys are in PLUR's schema order, as in any store PLUR has written.
saveEngrams(join(root, 'engrams.yaml'), loadEngrams(join(root, 'engrams.yaml')), { allowShrink: true })
// History in PLUR's own shape for the engrams that exist.
mkdirSync(join(root, 'history'), { recursive: true })
const months = {}
for (const e of engrams) {
  const ev = { event: 'engram_created', engram_id: e.id, timestamp: e.created_at, data: { type: e.type, scope: e.scope },
    actor: { asserted_by: e.attribution.asserted_by, runtime: { name: 'plur-core' } } }
  const m = e.created_at.slice(0, 7); (months[m] ||= []).push(JSON.stringify(ev))
}
for (const [m, lines] of Object.entries(months)) writeFileSync(join(root, 'history', `${m}.jsonl`), lines.join('\n') + '\n')
// Tensions through PLUR's public API (no LLM needed).
const active = engrams.filter((e) => e.status === 'active')
const pairs = []
for (let k = 0; k < nTensions && active.length > 2; k++) {
  const a = active[Math.floor(rand() * active.length)], b = active[Math.floor(rand() * active.length)]
  if (a.id === b.id) continue
  pairs.push({ id_a: a.id, id_b: b.id, statement_a: a.statement, statement_b: b.statement, confidence: 0.7 + Math.floor(rand() * 30) / 100, reason: 'They assert different values for the same setting' })
}
const plur2 = new Plur({ path: root, autoDiscover: false })
const rec = pairs.length ? await plur2.recordTensions(pairs) : { records: [] }
const drafts = engrams.filter((e) => e.commitment === 'draft').length
process.stdout.write(JSON.stringify({ engrams: engrams.length, drafts, tensions: rec.records?.length ?? 0 }))
