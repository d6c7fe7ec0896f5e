// What an agent can do to borrow a reviewer's authority with PLUR's public API and plain file writes (issue 36,
// items 3 and 4). stdin: {op, ...}; stdout: JSON. Canonical bytes as in signatures.mjs (PLUR-HISTORY-CHAIN.md §1.1).
import { Plur, appendHistory } from '@plur-ai/core'
import yaml from 'js-yaml'
import crypto from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { canonical } from './canonical.mjs'

const root = process.env.PLUR_PATH
const input = JSON.parse(readFileSync(0, 'utf8'))

const plur = new Plur({ path: root, autoDiscover: false })

// An undo reversed: the engram set decided again with the review record the undo took away (PLUR's updateEngram).
async function restore({ id, review }) {
  const engram = await plur.getById(id)
  return await plur.updateEngram({ ...engram, commitment: 'decided', review })
}

// A key of the agent's own in keys.yaml under `identity` (first, or appended), then a signed approval claiming
// `name` on `id`: the review record through updateEngram, the event through appendHistory, its `decided` block
// copied from what plur_desk writes (the engram's content hash and the values an approval sets).
async function impersonate({ identity, name, id, first }) {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519')
  const spki = publicKey.export({ format: 'der', type: 'spki' }).toString('base64')
  const file = join(root, 'keys.yaml')
  let doc
  try { doc = yaml.load(readFileSync(file, 'utf8')) ?? { keys: [] } } catch { doc = { keys: [] } }
  const entry = { identity, public_key: spki, added_at: new Date().toISOString() }
  doc.keys = first ? [entry, ...doc.keys] : [...doc.keys, entry]
  writeFileSync(file, yaml.dump({ keys: doc.keys }, { lineWidth: 120 }))
  const at = new Date().toISOString()
  const review = { state: 'approved', by: name, at, level: 'decided' }
  const engram = await plur.getById(id)
  await plur.updateEngram({ ...engram, commitment: 'decided', review })
  const after = await plur.getById(id)
  const event = {
    event: 'engram_updated', engram_id: id, timestamp: at,
    data: { action: 'approve', field: 'commitment', from: 'draft', to: 'decided',
      decided: { file: 'engrams', id, content_hash: after.content_hash, sets: { commitment: 'decided', review } } },
    actor: { asserted_by: name, kind: 'human', runtime: { name: 'plur-desk', version: '0.1.0' } },
  }
  appendHistory(root, { ...event, signature: crypto.sign(null, canonical(event), privateKey).toString('base64'), signer: identity })
  return { public_key: spki, at }
}

let result
switch (input.op) {
  case 'restore': result = await restore(input); break
  case 'impersonate': result = await impersonate(input); break
  default: throw new Error(`unknown op ${input.op}`)
}
process.stdout.write(JSON.stringify(result ?? null))
