// Approvals that outlive a client's time-out, through the official MCP
// TypeScript SDK against the real binary, over stdio and HTTP.
//
// The SDK gives up on a request after 60 s by default and tells the server
// (notifications/cancelled); a 2 s time-out plays that part here. The
// human is a script on the verifier's `command` channel that answers only
// once the test lets it (a gate file), and the test waits for what the
// dongle recorded (its audit rows), so nothing asserted depends on the
// machine's speed.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.SAFETY_DONGLE_BIN || resolve(here, '../../target/debug/safety-dongle');
const VERIFIER = join(dirname(BIN), 'safety-dongle-verifier');
/** The client's time-out, standing in for the SDK's default 60 s. */
const GIVE_UP_MS = 2_000;
/** Only turns a hang into a failure. */
const HANG_MS = 30_000;

const isAnswer = (row) => /\bapproval\s+approved\b/.test(row);
const isUse = (row) => /\bconfirm\s+used\b/.test(row);

/** A dongle whose verifier asks a scripted human, and that human. */
class Human {
  constructor() {
    for (const binary of [BIN, VERIFIER]) {
      assert.ok(existsSync(binary), `${binary} is missing: build the workspace first (cargo build --workspace)`);
    }
    this.dir = mkdtempSync(join(tmpdir(), 'dongle-ts-'));
    this.gate = join(this.dir, 'answer-now');
    const script = join(this.dir, 'human.sh');
    // Reads the request as a person reads the dialog, then approves once
    // let; bounded, so a failed test leaves no script waiting for long.
    writeFileSync(
      script,
      `#!/bin/sh\ncat > /dev/null\ni=0\nwhile [ ! -e '${this.gate}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\necho approve\n`,
    );
    this.config = join(this.dir, 'config.toml');
    // JSON strings are TOML basic strings.
    writeFileSync(
      this.config,
      [
        `data_dir = ${JSON.stringify(join(this.dir, 'state'))}`,
        '[verifier]',
        `program = ${JSON.stringify(VERIFIER)}`,
        'channels = ["command"]',
        `command = ["/bin/sh", ${JSON.stringify(script)}]`,
        '',
      ].join('\n'),
    );
  }

  letAnswer() {
    writeFileSync(this.gate, '');
  }

  /** The audit rows naming `approvalId`, as `safety-dongle audit` prints them. */
  auditRows(agent, approvalId) {
    const printed = execFileSync(BIN, ['audit', '--config', this.config, '--agent', agent], { encoding: 'utf8' });
    return printed.split('\n').filter((row) => row.includes(approvalId));
  }

  /** Waits until the dongle has recorded the use of the human's Approve. */
  async approveCollected(agent, approvalId) {
    const deadline = Date.now() + HANG_MS;
    while (!this.auditRows(agent, approvalId).some(isUse)) {
      assert.ok(Date.now() < deadline, `the Approve of ${approvalId} was never collected`);
      await new Promise((done) => setTimeout(done, 50));
    }
  }

  remove() {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function connected(transport) {
  const client = new Client({ name: 'safety-dongle-approvals-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

function overStdio(human) {
  return connected(
    new StdioClientTransport({ command: BIN, args: ['serve', '--config', human.config], env: { SAFETY_DONGLE_LOG: 'warn' } }),
  );
}

/** `serve --http` on a free port; resolves with the process and its MCP URL. */
function httpServer(human) {
  const server = spawn(BIN, ['serve', '--http', '127.0.0.1:0', '--config', human.config], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((announced, failed) => {
    let log = '';
    server.stderr.on('data', (chunk) => {
      log += chunk;
      const url = log.match(/http:\/\/127\.0\.0\.1:\d+\/mcp/);
      if (url) announced({ server, url: new URL(url[0]) });
    });
    server.on('exit', (status) => failed(new Error(`the server exited (${status}) before announcing its address:\n${log}`)));
  });
}

/** One tools/call; returns the MCP-AQL envelope its one text content holds. */
async function ask(client, tool, operation, params, options) {
  const result = await client.callTool({ name: tool, arguments: { operation, params } }, undefined, options);
  assert.equal(result.content.length, 1, JSON.stringify(result));
  return JSON.parse(result.content[0].text);
}

const confirm = (client, approvalId, options) => ask(client, 'mcp_aql_execute', 'confirm_operation', { approval_id: approvalId }, options);

/** Starts `agent` and reports a push, which waits for a human's approval. */
async function pausedForApproval(client, agent) {
  const started = await ask(client, 'mcp_aql_execute', 'execute_agent', { element_name: agent });
  assert.equal(started.success, true, JSON.stringify(started));
  const step = await ask(client, 'mcp_aql_create', 'record_execution_step', { element_name: agent, nextActionHint: 'git push origin main' });
  assert.equal(step.data.continue, false, JSON.stringify(step));
  return step.data.notifications.findLast((notification) => notification.type === 'autonomy_pause').metadata.approvalId;
}

/** confirm_operation with the short time-out: the SDK gives up and says so to the server. */
async function giveUp(client, approvalId) {
  await assert.rejects(confirm(client, approvalId, { timeout: GIVE_UP_MS }), (error) => error instanceof McpError && error.code === ErrorCode.RequestTimeout);
}

/**
 * The story: an agent ('pusher') waits for an approval, the client gives up on
 * confirm_operation, and only then the human approves; returns once the
 * dongle has used the Approve for the abandoned call.
 */
async function approvedAfterTheClientGaveUp(client, human) {
  const approvalId = await pausedForApproval(client, 'pusher');
  await giveUp(client, approvalId);
  human.letAnswer();
  await human.approveCollected('pusher', approvalId);
  return approvalId;
}

test('over stdio, a human who answers after the client gave up is heard by the retry, once', async (t) => {
  const human = new Human();
  const client = await overStdio(human);
  t.after(async () => {
    await client.close();
    human.remove();
  });
  const approvalId = await approvedAfterTheClientGaveUp(client, human);

  const retry = await confirm(client, approvalId);
  assert.deepEqual(retry, { success: true, data: { approved: true, approval_id: approvalId, element_name: 'pusher', redelivered: true } });
  const next = await ask(client, 'mcp_aql_create', 'record_execution_step', { element_name: 'pusher', nextActionHint: 'cargo build' });
  assert.equal(next.data.continue, true, `the pause is lifted: ${JSON.stringify(next)}`);
  const again = await confirm(client, approvalId);
  assert.equal(again.error?.code, 'TOKEN_ALREADY_USED', `told once more, not twice: ${JSON.stringify(again)}`);

  const rows = human.auditRows('pusher', approvalId);
  assert.equal(rows.filter(isAnswer).length, 1, `one row for the human's answer:\n${rows.join('\n')}`);
  assert.equal(rows.filter(isUse).length, 1, `one row for its use:\n${rows.join('\n')}`);
});

test('over HTTP, only the session whose client gave up hears the answer again', async (t) => {
  const human = new Human();
  const { server, url } = await httpServer(human);
  const [gaveUp, other] = [await connected(new StreamableHTTPClientTransport(url)), await connected(new StreamableHTTPClientTransport(url))];
  t.after(async () => {
    await gaveUp.close();
    await other.close();
    server.kill('SIGTERM');
    human.remove();
  });
  const approvalId = await approvedAfterTheClientGaveUp(gaveUp, human);

  const elsewhere = await confirm(other, approvalId);
  assert.equal(elsewhere.error?.code, 'TOKEN_ALREADY_USED', `another session: ${JSON.stringify(elsewhere)}`);
  const retry = await confirm(gaveUp, approvalId);
  assert.equal(retry.data?.approved, true, `the session that gave up: ${JSON.stringify(retry)}`);
  assert.equal(retry.data.redelivered, true);
  const again = await confirm(gaveUp, approvalId);
  assert.equal(again.error?.code, 'TOKEN_ALREADY_USED', `once: ${JSON.stringify(again)}`);
});
