// safety-dongle's guard for opencode: opencode has no command hook, only
// in-process plugins, so this plugin is the hook. Before every tool call
// (`tool.execute.before`) it passes the call to `safety-dongle hook opencode`
// as JSON on stdin and lets the call run only when the dongle answers
// {"decision":"continue"}. Anything else throws, which is how a plugin
// blocks a call in opencode (the message reaches the model): a deny, an
// answer it cannot read, a dongle that cannot start, exits non-zero, or
// does not answer within DEADLINE_MS. A failure of the guard is a refusal.
//
// `safety-dongle install opencode` writes this file into
// .opencode/plugins/ (or ~/.config/opencode/plugins/) with COMMAND set to
// the dongle it found; edit COMMAND to pass --config or --agent.
import { spawn } from "node:child_process"

const COMMAND = ["safety-dongle", "hook", "opencode"]
// Longer than the dongle's own deadline (its --timeout, 170 s by default),
// so the dongle's answer, a deny at its deadline included, arrives first.
const DEADLINE_MS = 180_000
const MAX_ANSWER_BYTES = 1024 * 1024

function askTheDongle(call) {
  return new Promise((resolve, reject) => {
    let child
    try {
      // The project names the calls' agent (`opencode:USER@HOST-ID:PROJECT`).
      const env = { ...process.env, OPENCODE_PROJECT_DIR: call.worktree || call.directory || "" }
      child = spawn(COMMAND[0], COMMAND.slice(1), { stdio: ["pipe", "pipe", "pipe"], env })
    } catch (error) {
      reject(new Error(`safety-dongle could not start (${error.message}), so this tool call is refused`))
      return
    }
    const chunks = []
    let size = 0
    let settled = false
    const settle = (outcome) => {
      if (!settled) {
        settled = true
        clearTimeout(timer)
        outcome()
      }
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      settle(() => reject(new Error(`safety-dongle did not answer within ${DEADLINE_MS / 1000} s, so this tool call is refused`)))
    }, DEADLINE_MS)
    child.on("error", (error) =>
      settle(() => reject(new Error(`safety-dongle could not run (${error.message}), so this tool call is refused`))),
    )
    child.stdout.on("data", (chunk) => {
      size += chunk.length
      if (size > MAX_ANSWER_BYTES) {
        child.kill("SIGKILL")
        settle(() => reject(new Error("safety-dongle's answer is too long, so this tool call is refused")))
        return
      }
      chunks.push(chunk)
    })
    child.stderr.resume()
    child.on("close", (code) =>
      settle(() => {
        const text = Buffer.concat(chunks).toString("utf8")
        if (code !== 0) {
          reject(new Error(`safety-dongle exited with ${code}, so this tool call is refused`))
          return
        }
        try {
          resolve(JSON.parse(text))
        } catch {
          reject(new Error("safety-dongle's answer is not JSON, so this tool call is refused"))
        }
      }),
    )
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(call))
  })
}

export const SafetyDongle = async ({ directory, worktree }) => ({
  "tool.execute.before": async (input, output) => {
    const answer = await askTheDongle({
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      args: output.args,
      directory,
      worktree,
    })
    if (answer?.decision !== "continue") {
      throw new Error(typeof answer?.reason === "string" ? answer.reason : "safety-dongle refused this tool call")
    }
  },
})
