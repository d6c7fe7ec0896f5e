// Independent checks of plur_desk's signatures, and the attacks an agent can make with PLUR's public API.
// stdin: {op, ...}; stdout: JSON. Canonical bytes follow PLUR-HISTORY-CHAIN.md §1.1 (sortKeysDeep + JSON.stringify),
// written here from the document, not from plur_desk's code. Ed25519 is Node's own (crypto.sign / crypto.verify).
import { Plur, appendHistory, listHistoryMonths, readHistory } from '@plur-ai/core'
import yaml from 'js-yaml'
import crypto from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { canonical, sortKeysDeep } from './canonical.mjs'

const root = process.env.PLUR_PATH
const input = JSON.parse(readFileSync(0, 'utf8'))

const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex')
function registry() {
  try { return yaml.load(readFileSync(join(root, 'keys.yaml'), 'utf8')) } catch { return { keys: [] } }
}
function lookup(identity) {  // PLUR's lookupPublicKey: the first entry of the identity
  const entry = (registry()?.keys ?? []).find((k) => k.identity === identity)
  return entry?.public_key ?? null
}
function verdict(event) {  // PLUR's verify --signatures verdicts
  const signer = typeof event.signer === 'string' ? event.signer : (typeof event.data?.signer === 'string' ? event.data.signer : null)
  if (typeof event.signature !== 'string') return 'unsigned'
  if (signer === null) return 'unknown_signer'
  const pub = lookup(signer)
  if (pub === null) return 'unknown_signer'
  try {
    const key = crypto.createPublicKey({ key: Buffer.from(pub, 'base64'), format: 'der', type: 'spki' })
    return crypto.verify(null, canonical(event), key, Buffer.from(event.signature, 'base64')) ? 'valid' : 'invalid'
  } catch { return 'invalid' }
}
function allEvents() { return listHistoryMonths(root).flatMap((m) => readHistory(root, m)) }

function verifyChain() {  // the doc's §4 walk (chained events only), plus the newest checkpoint's store_hash
  const events = allEvents()
  const breaks = []
  let expected = null, seen = false, head = null
  const hashes = new Set()
  for (const e of events) {
    if (e.hash === undefined) continue
    if (sha256(canonical(e)) !== e.hash) breaks.push(['hash_mismatch', e.event])
    const prev = e.prev ?? null
    if (seen && prev !== expected) breaks.push([prev === null ? 'declared_gap' : 'prev_mismatch', e.event])
    hashes.add(e.hash); expected = e.hash; seen = true; head = e.hash
  }
  const checkpoints = events.filter((e) => e.event === 'checkpoint')
  for (const c of checkpoints) if (typeof c.data?.chain_head === 'string' && !hashes.has(c.data.chain_head)) breaks.push(['checkpoint_head_missing'])
  const newest = checkpoints[checkpoints.length - 1]
  let storeHash = null
  if (newest) {
    const doc = yaml.load(readFileSync(join(root, 'engrams.yaml'), 'utf8'))
    storeHash = sha256(Buffer.from(JSON.stringify(sortKeysDeep(doc)), 'utf8'))
    if (newest.data.store_hash !== storeHash) breaks.push(['store_hash_mismatch'])
    const list = Array.isArray(doc) ? doc : doc.engrams
    const count = list.filter((e) => e && (e.status === undefined || e.status === 'active')).length
    if (newest.data.engram_count !== count) breaks.push(['engram_count'])
  }
  const signatures = checkpoints.map((c) => ({ verdict: verdict(c), signer: c.signer ?? null }))
  for (const s of signatures) if (s.verdict === 'invalid') breaks.push(['hash_mismatch', 'signature'])
  return { ok: breaks.length === 0, breaks, head, checkpoints: checkpoints.length, signatures, store_hash: storeHash }
}

function human(name, engramId, data, extra = {}) {
  return {
    event: 'engram_updated', engram_id: engramId, timestamp: new Date().toISOString(), data,
    actor: { asserted_by: name, kind: 'human', runtime: { name: 'plur-desk', version: '0.1.0' } }, ...extra,
  }
}

async function attack({ reviewer, targets, genuine }) {
  // 1. a human-looking approval through the public API: a review record on the engram and an unsigned event
  const plur = new Plur({ path: root, autoDiscover: false })
  const engram = plur.getById ? await plur.getById(targets.approve) : null
  const at = new Date().toISOString()
  await plur.updateEngram({ ...engram, commitment: 'decided', review: { state: 'approved', by: reviewer, at, level: 'decided' } })
  appendHistory(root, { ...human(reviewer, targets.approve, { action: 'approve', field: 'commitment', from: 'draft', to: 'decided' }), timestamp: at })
  // 2. a signature copied from a genuine event onto a new claim
  appendHistory(root, human(reviewer, targets.copied, { action: 'approve', field: 'commitment', from: 'draft', to: 'decided' },
    { signature: genuine.signature, signer: genuine.signer }))
  // 3. signed with a key nobody registered: under the reviewer's identity, and under an identity of its own
  const { privateKey } = crypto.generateKeyPairSync('ed25519')
  const sign = (e, signer) => ({ ...e, signature: crypto.sign(null, canonical(e), privateKey).toString('base64'), signer })
  appendHistory(root, sign(human(reviewer, targets.wrongKey, { action: 'approve', field: 'commitment', from: 'draft', to: 'decided' }), `human:${reviewer}`))
  appendHistory(root, sign(human('Eve', targets.unknown, { action: 'approve', field: 'commitment', from: 'draft', to: 'decided' }), 'human:Eve'))
  // 4. a genuine signed rejection, tampered: same signature, its reason and target changed
  const { _month, _line, ...rest } = genuine
  // 5. the genuinely rejected engram's review record flipped to an approval, borrowing the genuine instant
  const rejected = await plur.getById(genuine.engram_id)
  await plur.updateEngram({ ...rejected, review: { ...rejected.review, state: 'approved' } })
  appendHistory(root, { ...rest, engram_id: targets.tampered, data: { ...rest.data, reason: 'forged reason' } })
  return { at }
}

let result
switch (input.op) {
  case 'verdicts': result = allEvents().map((e) => ({ event: e.event, engram_id: e.engram_id, signer: e.signer ?? null, verdict: verdict(e), bytes_hash: sha256(canonical(e)) })); break
  case 'verifyChain': result = verifyChain(); break
  case 'keysDump': { const doc = registry(); result = { doc, dump: yaml.dump({ keys: doc.keys }, { lineWidth: 120 }) }; break }
  case 'attack': result = await attack(input); break
  default: throw new Error(`unknown op ${input.op}`)
}
process.stdout.write(JSON.stringify(result))
