// What the real PLUR reads from each store in a list (crash-trial stores): quarantined engrams, tensions, history.
// stdin: [path, ...]; stdout: [{path, engrams, quarantined, tensions_raw, tensions, events}].
import { loadEngrams, loadTensions, listHistoryMonths, readHistory } from '@plur-ai/core'
import yaml from 'js-yaml'
import { readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'

const out = []
for (const root of JSON.parse(readFileSync(0, 'utf8'))) {
  const file = join(root, 'engrams.yaml')
  const raw = yaml.load(readFileSync(file, 'utf8'))
  const valid = loadEngrams(file)
  const tfile = join(root, 'tensions.yaml')
  const traw = existsSync(tfile) ? yaml.load(readFileSync(tfile, 'utf8')) : []
  const events = listHistoryMonths(root).flatMap((m) => readHistory(root, m)).length
  out.push({ path: root, engrams: (raw?.engrams ?? []).length, quarantined: (raw?.engrams ?? []).length - valid.length,
    tensions_raw: (traw ?? []).length, tensions: loadTensions(tfile).length, events })
}
process.stdout.write(JSON.stringify(out))
