// Reads a JSON array of requests on stdin, answers a JSON array on stdout.
// {op: "dump", doc, quote: '"' | "'"}  -> {out}        (PLUR's dump options)
// {op: "load", text}                    -> {value} | {error}   (Dates become {$date: iso})
import yaml from 'js-yaml'
import { readFileSync } from 'node:fs'

const requests = JSON.parse(readFileSync(0, 'utf8'))
const tag = (v) => {
  if (v instanceof Date) return { $date: isNaN(v) ? 'Invalid Date' : v.toISOString() }
  if (Array.isArray(v)) return v.map(tag)
  if (v && typeof v === 'object') { const o = {}; for (const k of Object.keys(v)) o[k] = tag(v[k]); return o }
  if (typeof v === 'number' && !Number.isFinite(v)) return { $num: String(v) }
  return v
}
const answers = requests.map((r) => {
  try {
    if (r.op === 'dump') {
      const opts = { lineWidth: 120, noRefs: true }
      if (r.quote === '"') opts.quotingType = '"'
      return { out: yaml.dump(r.doc, opts) }
    }
    return { value: tag(yaml.load(r.text)) }
  } catch (e) {
    return { error: String(e.message).split('\n')[0] }
  }
})
process.stdout.write(JSON.stringify(answers))
