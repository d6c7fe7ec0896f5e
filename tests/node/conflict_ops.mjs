// PLUR's own view of tension candidates and inject warnings, for the contradiction-finder interop tests.
// stdin: [{op, ...args}], stdout: [result]. Runs against PLUR_PATH.
import { Plur, loadEngrams, getCandidatePairsDetailed } from '@plur-ai/core'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = process.env.PLUR_PATH
const ops = JSON.parse(readFileSync(0, 'utf8'))
const plur = new Plur({ path: root, autoDiscover: false })
await plur.ready?.()
const out = []
for (const o of ops) {
  try {
    switch (o.op) {
      case 'candidatePairs': {  // the pairs PLUR's own scan would send to its LLM judge, with recorded pairs excluded
        const engrams = loadEngrams(join(root, 'engrams.yaml'))
        const exclude = new Set(plur.suppressedTensionPairKeys())
        const { pairs } = getCandidatePairsDetailed(engrams, { ...plur.getTensionsConfig(), exclude_pairs: exclude })
        out.push(pairs.map(([a, b]) => [a.id, b.id].sort().join(':')))
        break
      }
      case 'injectWarnings': {
        const r = await plur.inject(o.prompt, o.options || {})
        out.push({ ids: r.injected_ids ?? [], warnings: r.warnings ?? [] })
        break
      }
      default: throw new Error(`unknown op ${o.op}`)
    }
  } catch (e) {
    out.push({ error: String(e && e.message || e) })
  }
}
process.stdout.write(JSON.stringify(out))
