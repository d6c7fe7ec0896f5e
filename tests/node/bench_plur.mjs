// PLUR's own cost on a store, for bench/: list(), approve one draft (getById + updateEngram), peak RSS.
// stdin: {op: "list" | "approve" | "bump", id?, n?}. Prints JSON with seconds and maxRSS (MB).
import { Plur, loadEngrams, saveEngrams } from '@plur-ai/core'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const req = JSON.parse(readFileSync(0, 'utf8'))
const root = process.env.PLUR_PATH
const t0 = performance.now()
let result = {}
if (req.op === 'bump') {  // PLUR's own serializer rewrites the file after bumping counters on a few engrams
  const file = join(root, 'engrams.yaml')
  const engrams = loadEngrams(file)
  for (let i = 0; i < (req.n ?? 5); i++) engrams[i * 97 % engrams.length].injection_count += 1
  saveEngrams(file, engrams)
} else if (req.op === 'mutate') {  // an agent's changes to many engrams at once (PLUR's own load and save)
  const file = join(root, 'engrams.yaml')
  const engrams = loadEngrams(file)
  const byId = new Map(engrams.map((e) => [e.id, e]))
  for (const m of req.changes) Object.assign(byId.get(m.id), m.fields, { updated_at: new Date().toISOString() })
  saveEngrams(file, engrams)
} else {
  const plur = new Plur({ path: root, autoDiscover: false })
  await plur.ready?.()
  if (req.op === 'list') result.count = (await plur.list()).length
  if (req.op === 'recall') {
    result.per_query = []
    for (const q of req.queries) {
      const t = performance.now()
      await plur.recall(q, { limit: 20 })
      result.per_query.push((performance.now() - t) / 1000)
    }
  }
  if (req.op === 'approve') {
    const e = await plur.getById(req.id)
    await plur.updateEngram({ ...e, commitment: 'decided' })
  }
}
const seconds = (performance.now() - t0) / 1000
const usage = process.resourceUsage()  // cpu_seconds: the whole process's user + system CPU, from its start
const cpu_seconds = (usage.userCPUTime + usage.systemCPUTime) / 1e6
process.stdout.write(JSON.stringify({ seconds, cpu_seconds, max_rss_mb: usage.maxRSS / 1024, ...result }))
