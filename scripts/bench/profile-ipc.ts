/**
 * The profiler commands of a process under test, over IPC (`npm run bench -- --profile`):
 * `{ cmd: 'profile-start' }` starts V8's sampling profiler in this process (`node:inspector`,
 * 100 µs interval) and answers `{}`; `{ cmd: 'profile-stop' }` answers `{ profile }` (the
 * `Profiler.stop` result). scripts/bench/edge.ts and scripts/bench/bare-node.ts (the floors) answer
 * them the same way, so a missed target's edge and floor are profiled alike.
 */
import { Session } from 'node:inspector/promises'

let session: Session | undefined

/**
 * Answers `m` when it is a profiler command.
 * @returns true when `m` was one (the caller handles every other message)
 */
export function profileCommand(m: { cmd?: string }): boolean {
  if (m.cmd === 'profile-start') {
    const s = (session = new Session())
    s.connect()
    void s
      .post('Profiler.enable')
      .then(() => s.post('Profiler.setSamplingInterval', { interval: 100 }))
      .then(() => s.post('Profiler.start'))
      .then(() => process.send!({}))
    return true
  }
  if (m.cmd === 'profile-stop') {
    const s = session!
    void s.post('Profiler.stop').then(({ profile }) => {
      s.disconnect()
      session = undefined
      process.send!({ profile })
    })
    return true
  }
  return false
}
