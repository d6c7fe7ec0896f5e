// Every code point through JavaScript's Unicode tables: which ones /[\p{L}\p{N}\p{M}]/u matches, which are Cased
// and Case_Ignorable (toLowerCase's final-sigma rule), and toLowerCase where it changes the character.
const W = /[\p{L}\p{N}\p{M}]/u, C = /\p{Cased}/u, I = /\p{Case_Ignorable}/u
const word = [], cased = [], ignorable = [], lower = {}
for (let cp = 0; cp <= 0x10FFFF; cp++) {
  if (cp >= 0xD800 && cp <= 0xDFFF) continue
  const ch = String.fromCodePoint(cp)
  if (W.test(ch)) word.push(cp)
  if (C.test(ch)) cased.push(cp)
  if (I.test(ch)) ignorable.push(cp)
  const lo = ch.toLowerCase()
  if (lo !== ch) lower[cp] = lo
}
process.stdout.write(JSON.stringify({ word, cased, ignorable, lower }))
