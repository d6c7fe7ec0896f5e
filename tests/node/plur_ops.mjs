// Drives the real PLUR (@plur-ai/core) for the interop tests. stdin: [{op, ...args}], stdout: [result].
// Runs against PLUR_PATH (the tests point it at a throw-away store and HOME).
import { Plur, loadEngrams, loadTensions, listHistoryMonths, readHistory, validateStore, computeContentHash } from '@plur-ai/core'
import yaml from 'js-yaml'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = process.env.PLUR_PATH
const ops = JSON.parse(readFileSync(0, 'utf8'))
let plur = null
const P = async () => { if (!plur) { plur = new Plur({ path: root, autoDiscover: false }); await plur.ready?.() } return plur }
const out = []
for (const o of ops) {
  try {
    switch (o.op) {
      case 'load': {  // what PLUR's loader accepts, and what it quarantines
        const file = join(root, 'engrams.yaml')
        const raw = yaml.load(readFileSync(file, 'utf8'))
        const valid = loadEngrams(file)
        const validIds = new Set(valid.map((e) => e.id))
        const rawIds = (raw?.engrams ?? []).map((e) => e?.id)
        out.push({ valid: valid.map((e) => e.id), quarantined: rawIds.filter((id) => !validIds.has(id)),
          engrams: Object.fromEntries(valid.map((e) => [e.id, e])), validate: validateStore(file) })
        break
      }
      case 'tensions': out.push(loadTensions(join(root, 'tensions.yaml'))); break
      case 'listTensions': out.push((await P()).listTensions(o.filter)); break
      case 'history': {
        const months = listHistoryMonths(root)
        out.push(months.flatMap((m) => readHistory(root, m)))
        break
      }
      case 'learn': out.push(await (await P()).learn(o.statement, o.options || {})); break
      case 'learnLoop': {  // many learns, for the concurrency test
        const p = await P(); const ids = []
        for (let i = 0; i < o.n; i++) ids.push((await p.learn(`${o.prefix} number ${i} about the build cache`, { scope: 'project:race' })).id)
        out.push(ids); break
      }
      case 'inject': {
        const r = await (await P()).inject(o.prompt, o.options || {})
        out.push({ ids: r.injected_ids ?? r.ids ?? [], count: r.count }); break
      }
      case 'recall': out.push((await (await P()).recall(o.query, o.options || {})).map((e) => e.id)); break
      case 'getById': out.push((await P()).getById ? await (await P()).getById(o.id) : null); break
      case 'confirm': out.push((await P()).confirmTension(o.id)); break
      case 'dismiss': out.push((await P()).dismissTension(o.id)); break
      case 'resolve': out.push(await (await P()).resolveTension(o.id, o.winner)); break
      case 'recordTensions': out.push(await (await P()).recordTensions(o.pairs)); break
      case 'forget': out.push(await (await P()).forget(o.id, o.reason, o.options || {})); break
      case 'sync': out.push(await (await P()).sync(o.remote, o.options || {})); break
      case 'syncStatus': out.push((await P()).syncStatus()); break
      case 'update': { const p = await P(); const e = await p.getById(o.id); out.push(await p.updateEngram({ ...e, ...o.fields })); break }
      case 'setPinned': out.push(await (await P()).setPinned(o.id, o.pinned)); break
      case 'list': out.push((await (await P()).list(o.filter || {})).map((e) => e.id)); break
      case 'contentHash': out.push(o.statements.map((s) => computeContentHash(s))); break
      default: throw new Error(`unknown op ${o.op}`)
    }
  } catch (e) {
    out.push({ error: String(e && e.message || e) })
  }
}
process.stdout.write(JSON.stringify(out, (k, v) => v instanceof Set ? [...v] : v))
