// PLUR's canonical bytes of an event (PLUR-HISTORY-CHAIN.md §1.1: sortKeysDeep + JSON.stringify, without hash,
// signature and signer), written from the document, not from plur_desk's code; shared by the Node oracles.
export function sortKeysDeep(v) {
  if (v && typeof v.toJSON === 'function') v = v.toJSON()
  if (Array.isArray(v)) return v.map(sortKeysDeep)
  if (v && typeof v === 'object') {
    const o = {}
    for (const k of Object.keys(v).sort()) o[k] = sortKeysDeep(v[k])
    return o
  }
  return v
}
export function canonical(event) {
  const c = { ...event }
  delete c.hash; delete c.signature; delete c.signer
  return Buffer.from(JSON.stringify(sortKeysDeep(c)), 'utf8')
}
