// The LeaderWorkerSet example (deploy/kubernetes/leaderworkerset/): its configuration templates are
// rendered by the very script its init containers run, with the environment LeaderWorkerSet and the
// downward API give each pod; the rendered configurations pass modelwatch's validation, the leader's
// readiness gate is its target's, and two real daemons started from them read each other.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { startDaemon } from '../../src/daemon.js';

const root = join(import.meta.dirname, '..', '..');
const dir = join(root, 'deploy', 'kubernetes', 'leaderworkerset');

interface Container {
  readonly name: string;
  readonly image: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly restartPolicy?: string;
  readonly env?: readonly { readonly name: string; readonly value?: string; readonly valueFrom?: { readonly fieldRef?: { readonly fieldPath: string } } }[];
  readonly readinessProbe?: { readonly httpGet?: { readonly path: string; readonly port: number | string } };
  readonly securityContext?: { readonly runAsNonRoot?: boolean; readonly readOnlyRootFilesystem?: boolean; readonly allowPrivilegeEscalation?: boolean };
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string; readonly readOnly?: boolean }[];
}
interface PodSpec { readonly initContainers?: readonly Container[]; readonly containers: readonly Container[]; readonly volumes?: readonly { readonly name: string; readonly configMap?: { readonly name: string }; readonly emptyDir?: object }[] }
interface Template { readonly metadata: { readonly labels: Record<string, string> }; readonly spec: PodSpec }
interface Doc {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly data?: Record<string, string>;
  readonly spec?: {
    readonly selector?: Record<string, string> & { readonly matchLabels?: Record<string, string> };
    readonly leaderWorkerTemplate?: { readonly size: number; readonly restartPolicy?: string; readonly leaderTemplate: Template; readonly workerTemplate: Template };
    readonly publishNotReadyAddresses?: boolean;
    readonly endpoints?: readonly { readonly port: string; readonly path?: string }[];
  };
}

const docs = parseAllDocuments(readFileSync(join(dir, 'leaderworkerset-example.yaml'), 'utf8')).map((d) => d.toJS() as Doc);
const monitor = parseAllDocuments(readFileSync(join(dir, 'servicemonitor.yaml'), 'utf8')).map((d) => d.toJS() as Doc)[0]!;
const generic = parseAllDocuments(readFileSync(join(root, 'deploy', 'kubernetes', 'servicemonitor.yaml'), 'utf8')).map((d) => d.toJS() as Doc)[0]!;
const of = (kind: string, name?: string): Doc => docs.find((d) => d.kind === kind && (name === undefined || d.metadata.name === name))!;
const lws = of('LeaderWorkerSet');
const map = of('ConfigMap');
const leader = lws.spec!.leaderWorkerTemplate!.leaderTemplate.spec;
const worker = lws.spec!.leaderWorkerTemplate!.workerTemplate.spec;
const container = (pod: PodSpec, name: string): Container => [...(pod.initContainers ?? []), ...pod.containers].find((c) => c.name === name)!;
const isSubset = (small: Record<string, string> | undefined, big: Record<string, string> | undefined): boolean => small !== undefined && Object.entries(small).every(([k, v]) => big?.[k] === v);

/** What the LeaderWorkerSet controller and the downward API give the pods of group 0 of size 2. */
const podEnv = { leader: { POD_NAME: 'kimi-0', GROUP_INDEX: '0', LWS_GROUP_SIZE: '2', LWS_WORKER_INDEX: '0', LWS_LEADER_ADDRESS: 'kimi-0.kimi.inference' }, worker: { POD_NAME: 'kimi-0-1', GROUP_INDEX: '0', LWS_GROUP_SIZE: '2', LWS_WORKER_INDEX: '1', LWS_LEADER_ADDRESS: 'kimi-0.kimi.inference' } } as const;

/** Renders one template with the script the init container runs, in the pod's environment. */
function render(pod: PodSpec, env: Readonly<Record<string, string>>): { status: number | null; text: string; stderr: string } {
  const init = container(pod, 'modelwatch-config');
  const tmp = mkdtempSync(join(tmpdir(), 'mw-lws-'));
  try {
    // The ConfigMap's keys, where the init container reads them; the output where it writes it.
    for (const [k, v] of Object.entries(map.data ?? {})) writeFileSync(join(tmp, k), v);
    const args = (init.command ?? []).slice(1).map((a) => a.replace('/etc/modelwatch-templates/', `${tmp}/`).replace('/etc/modelwatch/', `${tmp}/out-`));
    const res = spawnSync(process.execPath, args, { env: { PATH: process.env['PATH'] ?? '', ...env }, encoding: 'utf8' });
    let text = '';
    try {
      text = readFileSync(join(tmp, 'out-modelwatch.yaml'), 'utf8');
    } catch {
      // nothing written
    }
    return { status: res.status, text, stderr: res.stderr };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function configOf(pod: PodSpec, env: Readonly<Record<string, string>>): Config {
  const r = render(pod, env);
  expect(r.stderr).toBe('');
  const v = validateConfigText(r.text, 'modelwatch.yaml');
  if (v.config === undefined) throw new Error(v.problems.join('; '));
  return v.config;
}

describe('deploy/kubernetes/leaderworkerset', () => {
  it('is one LeaderWorkerSet group of two pods that restarts as a whole, each pod with the modelwatch sidecar', () => {
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual(['ConfigMap/kimi-modelwatch', 'Service/kimi-modelwatch', 'Service/kimi', 'LeaderWorkerSet/kimi']);
    expect(lws.apiVersion).toBe('leaderworkerset.x-k8s.io/v1');
    expect(lws.spec?.leaderWorkerTemplate).toMatchObject({ size: 2, restartPolicy: 'RecreateGroupOnPodRestart' });
    for (const pod of [leader, worker]) {
      expect(pod.initContainers?.map((c) => c.name)).toEqual(['modelwatch-config', 'log-file', 'modelwatch']);
      expect(container(pod, 'modelwatch')).toMatchObject({ restartPolicy: 'Always', args: ['run', '-c', '/etc/modelwatch/modelwatch.yaml'] });
      for (const c of [...(pod.initContainers ?? [])]) expect(c.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      // The rendered configuration reaches the sidecar through one emptyDir.
      const written = container(pod, 'modelwatch-config').volumeMounts?.find((m) => m.mountPath === '/etc/modelwatch');
      const read = container(pod, 'modelwatch').volumeMounts?.find((m) => m.mountPath === '/etc/modelwatch');
      expect(written?.name).toBe(read?.name);
      expect(read?.readOnly).toBe(true);
      expect(pod.volumes?.find((v) => v.name === read?.name)?.emptyDir).toBeDefined();
      expect(container(pod, 'modelwatch-config').env?.find((e) => e.name === 'GROUP_INDEX')?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.labels['leaderworkerset.sigs.k8s.io/group-index']");
    }
  });

  it('renders a head and a worker configuration for each pod that modelwatch accepts, each naming the other as its peer', () => {
    const head = configOf(leader, podEnv.leader);
    const node2 = configOf(worker, podEnv.worker);
    expect(head.targets['leader']).toMatchObject({ url: 'http://127.0.0.1:8000', group: 'kimi-0', role: 'head', rank: 0, nodes: 2, peers: [{ url: 'http://kimi-0-1.kimi.inference:9464', target: 'worker' }], smoke: { enabled: true } });
    expect(node2.targets['worker']).toMatchObject({ group: 'kimi-0', role: 'worker', rank: 1, nodes: 2, peers: [{ url: 'http://kimi-0.kimi.inference:9464', target: 'leader' }], smoke: { enabled: false } });
    expect(node2.targets['worker']?.url).toBeUndefined();
    // The leader's peer is the worker pod's DNS name: <leader pod>-<worker index>.<LeaderWorkerSet>.<namespace>.
    expect(head.targets['leader']?.peers?.[0]?.url).toBe(`http://${podEnv.worker.POD_NAME}.${lws.metadata.name}.${lws.metadata.namespace ?? ''}:9464`);
    // A variable the pod lacks is an error, not an empty value.
    const missing = render(worker, { ...podEnv.worker, LWS_LEADER_ADDRESS: '' });
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain('LWS_LEADER_ADDRESS is not set to a name or number');
  });

  it("gates the leader's readiness on the group as its modelwatch sees it, and runs vLLM across both nodes", () => {
    const head = configOf(leader, podEnv.leader);
    const vllm = container(leader, 'vllm');
    expect(vllm.readinessProbe?.httpGet).toEqual({ path: '/api/v1/targets/leader/ready', port: head.listen.port });
    expect(container(worker, 'vllm').readinessProbe).toBeUndefined();
    const leaderArgs = vllm.args?.join('\n') ?? '';
    const workerArgs = container(worker, 'vllm').args?.join('\n') ?? '';
    for (const args of [leaderArgs, workerArgs]) {
      expect(args).toContain('--tensor-parallel-size 16');
      expect(args).toContain('--nnodes "$LWS_GROUP_SIZE"');
      expect(args).toContain('--master-addr "$LWS_LEADER_ADDRESS" --master-port 29501');
      expect(args).toContain('exec > >(tee -a /var/log/vllm/vllm.log) 2>&1');
    }
    expect(leaderArgs).toContain('--node-rank 0');
    expect(workerArgs).toContain('--node-rank "$LWS_WORKER_INDEX"');
    expect(workerArgs).toContain('--headless');
    // The engine's deadline and the startupProbe are the ones the leader's modelwatch knows.
    expect(head.targets['leader']?.deadlines).toEqual({ startup_probe: 90 * 60_000, engine_ready_timeout: 90 * 60_000 });
    expect(vllm.env).toContainEqual({ name: 'VLLM_ENGINE_READY_TIMEOUT_S', value: '5400' });
  });

  it('scrapes every pod of the group once, through its own ServiceMonitor, and serves clients from the leaders only', () => {
    const metrics = of('Service', 'kimi-modelwatch');
    expect(metrics.spec?.publishNotReadyAddresses).toBe(true);
    expect(isSubset(monitor.spec?.selector?.matchLabels, metrics.metadata.labels)).toBe(true);
    expect(isSubset(generic.spec?.selector?.matchLabels, metrics.metadata.labels)).toBe(false);
    for (const t of [lws.spec!.leaderWorkerTemplate!.leaderTemplate, lws.spec!.leaderWorkerTemplate!.workerTemplate]) {
      expect(isSubset(metrics.spec?.selector as Record<string, string>, t.metadata.labels)).toBe(true);
    }
    expect(monitor.spec?.endpoints).toMatchObject([{ port: 'metrics', path: '/metrics' }]);
    expect(of('Service', 'kimi').spec?.selector).toEqual({ 'app.kubernetes.io/name': 'kimi', 'leaderworkerset.sigs.k8s.io/worker-index': '0' });
  });

  it('starts both rendered configurations as real daemons that read each other (peers on loopback)', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'mw-lws-run-'));
    const ports = [19_000 + Math.floor(Math.random() * 5000), 24_500 + Math.floor(Math.random() * 5000)] as const;
    const local = (c: Config, name: string, port: number, peerPort: number): Config => {
      const t = c.targets[name]!;
      return {
        ...c,
        gpu: { ...c.gpu, enabled: false },
        history: { ...c.history, path: join(tmp, `${name}.db`) },
        targets: { [name]: { ...t, logs: { kind: 'file', path: join(tmp, `${name}.log`) }, peers: (t.peers ?? []).map((p) => ({ ...p, url: `http://127.0.0.1:${peerPort}` })) } },
        listen: { ...c.listen, port },
      };
    };
    const head = local(configOf(leader, podEnv.leader), 'leader', ports[0], ports[1]);
    const node2 = local(configOf(worker, podEnv.worker), 'worker', ports[1], ports[0]);
    const a = await startDaemon(head, { listen: { host: '127.0.0.1', port: ports[0] }, logLevel: false, pollMs: 200 });
    const b = await startDaemon(node2, { listen: { host: '127.0.0.1', port: ports[1] }, logLevel: false, pollMs: 200 });
    try {
      const deadline = Date.now() + 10_000;
      let peers: { name: string; up: boolean; role: string | null }[] = [];
      while (Date.now() < deadline) {
        const s = (await (await fetch(`${a.address}/api/v1/targets/leader`)).json()) as { group: { peers: typeof peers } };
        peers = s.group.peers;
        if (peers[0]?.up === true) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(peers).toMatchObject([{ name: 'worker', up: true, role: 'worker' }]);
      const gate = await fetch(`${a.address}/api/v1/targets/leader/ready`);
      expect(gate.status).toBe(503);
      const w = (await (await fetch(`${b.address}/api/v1/targets/worker`)).json()) as { url: string; group: { role: string; rank: number; nodes: number } };
      expect(w).toMatchObject({ url: '', group: { role: 'worker', rank: 1, nodes: 2 } });
      const metrics = await (await fetch(`${b.address}/metrics`)).text();
      expect(metrics).toContain('modelwatch_group_member{target="worker",group="kimi-0",role="worker",rank="1"} 1');
    } finally {
      await a.close();
      await b.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 30_000);
});
