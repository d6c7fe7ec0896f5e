// PLUR 0.21's lock protocol, transcribed for the tests: only 0.20.0 installs here, so the lock races against 0.21
// run against this transcription. Source: plur-ai/plur packages/core/src/store/async-lock.ts, the synchronous
// twins (`publishLockFileSync`, `isAbandoned`/`abandonedByAge`, `takeOverSync`, `acquireStealSlotSync`,
// `stealGuardPath`, `judgeStealSlot`, `stealLockSync`, `inspectLockSync`), read at
// agent-memory-atlas-archive/plur-ai--plur@867f16071a6bd3ee0473c81d70c205a1dd9ac98e (the archived plur-ai/plur;
// ladder of an empty lock keyed by its inode) and in a plur-ai/plur copy read without its commit
// (ladder of an empty lock keyed by the empty token): `variant` picks one. Test code, not PLUR's.
//
// stdin: one JSON request per line; stdout: one JSON answer per line.
//   {op:"race", lock, inside, holdMs, delayMs, variant} -> acquire, mark `inside` exclusively while holding
//   {op:"hold", lock, holdMs, variant}                  -> acquire, answer, release holdMs later and answer again
//   {op:"once", lock, nowMs, host, variant}             -> one acquisition pass as a taker on `host` at `nowMs`
import fs from 'node:fs'
import os from 'node:os'
import crypto from 'node:crypto'
import readline from 'node:readline'

const STALE = 60_000
const EMPTY_GRACE = 10_000
const GUARD_STALE = 10_000
const SLOTS = 8
const LINK_UNSUPPORTED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EINVAL'])
let host = os.hostname()
let clock = () => Date.now()
let counter = 0
const makeToken = () => `${host}:${process.pid}:${Date.now()}:${counter++}`
const sibling = (lock, kind, token) => `${lock}.${kind}.${token.replace(/[^\w.-]/g, '_')}`

function holderIsAlive(token) {
  const parts = token.split(':')
  if (parts.length < 2) return undefined
  if (parts[0] !== host) return undefined
  const pid = Number(parts[1])
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  try { process.kill(pid, 0); return true } catch (err) { return err?.code === 'EPERM' }
}
const abandonedByAge = (holder, age) => holder === '' ? age > Math.min(EMPTY_GRACE, STALE) : age > STALE
function isAbandoned(holder, mtimeMs) {
  const alive = holderIsAlive(holder)
  if (alive === false) return true
  return alive === undefined && abandonedByAge(holder, clock() - mtimeMs)
}

function publishLockFileSync(lock, token) {
  const priv = sibling(lock, 'publish', token)
  fs.writeFileSync(priv, token, { flag: 'wx' })
  let fallback = false
  try { fs.linkSync(priv, lock) } catch (err) {
    if (!LINK_UNSUPPORTED.has(err?.code)) throw err
    fallback = true
  } finally { try { fs.unlinkSync(priv) } catch {} }
  if (!fallback) return
  const fd = fs.openSync(lock, 'wx')
  let ino
  try { fs.writeSync(fd, token); ino = fs.fstatSync(fd).ino } finally { fs.closeSync(fd) }
  let now
  try { now = fs.statSync(lock).ino } catch {}
  if (now !== ino) throw Object.assign(new Error('lost during acquire'), { code: 'EEXIST' })
}

function inspectLockSync(p) {
  try {
    const s = fs.statSync(p)
    const holder = fs.readFileSync(p, 'utf8').trim()
    const again = fs.statSync(p)
    if (again.ino !== s.ino) return null
    return { holder, mtimeMs: again.mtimeMs, ino: s.ino }
  } catch { return null }
}

function stealGuardPath(lock, expected, k, ino, variant) {
  const id = variant === 'ino' && expected === '' && ino !== undefined ? `\u0000ino:${ino}` : expected
  const key = crypto.createHash('sha256').update(id).digest('hex').slice(0, 16)
  return `${lock}.guard-${key}-${k}`
}
function judgeStealSlot(contents, mtimeMs) {
  const alive = holderIsAlive(contents.trim())
  return alive === false || (alive === undefined && clock() - mtimeMs > GUARD_STALE) ? 'dead' : 'live'
}
function slotState(slot) {
  try { const c = fs.readFileSync(slot, 'utf8'); return judgeStealSlot(c, fs.statSync(slot).mtimeMs) } catch { return 'gone' }
}
function releaseIfOurs(p, token) {
  try { if (fs.readFileSync(p, 'utf8').trim() === token) fs.unlinkSync(p) } catch {}
}
function acquireStealSlotSync(lock, expected, ino, token, variant) {
  for (let k = 0; k < SLOTS; k++) {
    const slot = stealGuardPath(lock, expected, k, ino, variant)
    try { fs.writeFileSync(slot, token, { flag: 'wx' }) } catch (err) {
      if (err?.code !== 'EEXIST') return null
      if (slotState(slot) === 'dead') continue
      return null
    }
    for (let i = 0; i < k; i++) {
      if (slotState(stealGuardPath(lock, expected, i, ino, variant)) !== 'dead') { releaseIfOurs(slot, token); return null }
    }
    return slot
  }
  return null
}
function stealLockSync(lock, expected, expectedIno) {
  const claim = sibling(lock, 'steal', makeToken())
  try { fs.renameSync(lock, claim) } catch { return false }
  try {
    const current = fs.readFileSync(claim, 'utf8')
    if (current.trim() === expected && fs.statSync(claim).ino === expectedIno) { fs.unlinkSync(claim); return true }
    try { fs.linkSync(claim, lock) } catch (err) {
      if (LINK_UNSUPPORTED.has(err?.code)) {
        try { const fd = fs.openSync(lock, 'wx'); try { fs.writeSync(fd, current.trim()) } finally { fs.closeSync(fd) } } catch {}
      }
    }
    try { fs.unlinkSync(claim) } catch {}
  } catch { try { fs.unlinkSync(claim) } catch {} }
  return false
}
function takeOverSync(lock, variant) {
  const seen = inspectLockSync(lock)
  if (!seen || !isAbandoned(seen.holder, seen.mtimeMs)) return true
  const guardToken = makeToken()
  const slot = acquireStealSlotSync(lock, seen.holder, seen.ino, guardToken, variant)
  if (!slot) return false
  try {
    const cur = inspectLockSync(lock)
    if (!cur || cur.holder !== seen.holder || cur.ino !== seen.ino) return true
    if (!isAbandoned(cur.holder, cur.mtimeMs)) return true
    if (stealLockSync(lock, cur.holder, cur.ino)) {
      for (let k = 0; k < SLOTS; k++) {
        const other = stealGuardPath(lock, seen.holder, k, seen.ino, variant)
        if (other !== slot) { try { fs.unlinkSync(other) } catch {} }
      }
    }
    return true
  } finally { releaseIfOurs(slot, guardToken) }
}

// One acquisition attempt loop of withFileLock, bounded by `passes` (no sleeping: races run back to back).
function acquire(lock, token, variant, passes) {
  for (let pass = 0; pass < passes; pass++) {
    try { publishLockFileSync(lock, token); return true } catch (err) {
      if (err.code !== 'EEXIST') throw err
      const seen = inspectLockSync(lock)
      if (!seen) continue
      if (seen.holder === token) return true
      if (isAbandoned(seen.holder, seen.mtimeMs)) { takeOverSync(lock, variant); continue }
      spin(0.2)
    }
  }
  return false
}
function spin(ms) { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms) }

const rl = readline.createInterface({ input: process.stdin })
for await (const line of rl) {
  if (!line.trim()) continue
  const req = JSON.parse(line)
  if (req.op === 'race') {
    if (req.delayMs > 0) spin(req.delayMs)
    const token = makeToken()
    const acquired = acquire(req.lock, token, req.variant, 20000)
    let violation = false
    if (acquired) {
      try { fs.writeFileSync(req.inside, token, { flag: 'wx' }) } catch { violation = true }
      try { fs.writeFileSync(req.order, token, { flag: 'wx' }) } catch {}
      if (req.holdMs > 0) spin(req.holdMs)
      if (fs.readFileSync(req.lock, 'utf8').trim() !== token) violation = true
      if (!violation) fs.unlinkSync(req.inside)
      releaseIfOurs(req.lock, token)
    }
    process.stdout.write(JSON.stringify({ acquired, violation }) + '\n')
  } else if (req.op === 'hold') {
    // Take the lock, say so, and release it `holdMs` later, saying whether our lock was still in place then.
    const token = makeToken()
    const acquired = acquire(req.lock, token, req.variant, 20000)
    process.stdout.write(JSON.stringify({ acquired }) + '\n')
    setTimeout(() => {
      let ours = false
      try { ours = fs.readFileSync(req.lock, 'utf8').trim() === token } catch {}
      releaseIfOurs(req.lock, token)
      process.stdout.write(JSON.stringify({ released: true, ours }) + '\n')
    }, req.holdMs)
  } else if (req.op === 'once') {
    host = req.host
    clock = () => req.nowMs
    const token = makeToken()
    const acquired = acquire(req.lock, token, req.variant, 3)
    process.stdout.write(JSON.stringify({ acquired, token }) + '\n')
  }
}
