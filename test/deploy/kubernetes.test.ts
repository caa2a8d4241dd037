import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { startDaemon } from '../../src/daemon.js';
import { prometheusRule, prometheusRuleFile, rulesFile } from '../../src/deploy/prometheus-rule.js';

const root = join(import.meta.dirname, '..', '..');
const dir = join(root, 'deploy', 'kubernetes');

interface HttpProbe {
  readonly httpGet?: { readonly path: string; readonly port: number | string };
  readonly initialDelaySeconds?: number;
  readonly periodSeconds?: number;
  readonly failureThreshold?: number;
}
interface Container {
  readonly name: string;
  readonly image: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly restartPolicy?: string;
  readonly env?: readonly { readonly name: string; readonly value?: string }[];
  readonly ports?: readonly { readonly name?: string; readonly containerPort: number }[];
  readonly startupProbe?: HttpProbe;
  readonly livenessProbe?: HttpProbe;
  readonly readinessProbe?: HttpProbe;
  readonly resources?: { readonly requests?: Record<string, unknown>; readonly limits?: Record<string, unknown> };
  readonly securityContext?: {
    readonly runAsUser?: number;
    readonly runAsNonRoot?: boolean;
    readonly readOnlyRootFilesystem?: boolean;
    readonly allowPrivilegeEscalation?: boolean;
    readonly capabilities?: { readonly drop?: readonly string[]; readonly add?: readonly string[] };
  };
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string; readonly readOnly?: boolean }[];
}
interface Volume {
  readonly name: string;
  readonly configMap?: { readonly name: string };
  readonly hostPath?: { readonly path: string; readonly type?: string };
  readonly emptyDir?: object;
}
interface PodSpec {
  readonly containers: readonly Container[];
  readonly initContainers?: readonly Container[];
  readonly volumes?: readonly Volume[];
  readonly nodeSelector?: Record<string, string>;
  readonly tolerations?: readonly { readonly key?: string; readonly operator?: string; readonly effect?: string }[];
  readonly runtimeClassName?: string;
  readonly hostNetwork?: boolean;
  readonly hostPID?: boolean;
}
interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly data?: Record<string, string>;
  readonly spec?: {
    readonly selector?: Record<string, string> | { readonly matchLabels?: Record<string, string> };
    readonly template?: { readonly metadata: { readonly labels: Record<string, string> }; readonly spec: PodSpec };
    readonly volumeClaimTemplates?: readonly { readonly metadata: { readonly name: string } }[];
    readonly ports?: readonly { readonly name: string; readonly port: number; readonly targetPort: number | string }[];
    readonly publishNotReadyAddresses?: boolean;
    readonly namespaceSelector?: { readonly matchNames?: readonly string[]; readonly any?: boolean };
    readonly endpoints?: readonly { readonly port: string; readonly path?: string }[];
    readonly groups?: unknown;
  };
}

/** Every document of every manifest file, with the file it came from. */
const docs: { file: string; doc: Manifest }[] = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => {
      if (d.errors.length > 0) throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
      return { file, doc: d.toJS() as Manifest };
    }),
  );
const all = docs.map((d) => d.doc);
const ofKind = (kind: string): Manifest[] => all.filter((d) => d.kind === kind);
const workloads = all.filter((d) => d.kind === 'DaemonSet' || d.kind === 'StatefulSet' || d.kind === 'Deployment');
const podOf = (w: Manifest): PodSpec => {
  const pod = w.spec?.template?.spec;
  if (pod === undefined) throw new Error(`${w.kind}/${w.metadata.name} has no pod template`);
  return pod;
};
const containersOf = (pod: PodSpec): Container[] => [...(pod.initContainers ?? []), ...pod.containers];
/** The container that runs the daemon: `run -c FILE`. */
const watcherOf = (pod: PodSpec): Container => {
  const c = containersOf(pod).find((x) => x.args?.[0] === 'run');
  if (c === undefined) throw new Error('no container runs `modelwatch run`');
  return c;
};
const isSubset = (small: Record<string, string> | undefined, big: Record<string, string>): boolean =>
  small !== undefined && Object.entries(small).every(([k, v]) => big[k] === v);

/** The configuration a workload's modelwatch container runs: the ConfigMap key its `-c` path names. */
function configOf(w: Manifest): { text: string; file: string } {
  const pod = podOf(w);
  const c = watcherOf(pod);
  const path = c.args?.[c.args.indexOf('-c') + 1] ?? '';
  const mount = c.volumeMounts?.find((m) => m.mountPath === dirname(path));
  const volume = pod.volumes?.find((v) => v.name === mount?.name);
  const map = ofKind('ConfigMap').find((m) => m.metadata.name === volume?.configMap?.name && m.metadata.namespace === w.metadata.namespace);
  const text = map?.data?.[basename(path)];
  if (text === undefined) throw new Error(`${w.kind}/${w.metadata.name}: ${path} is not a key of a ConfigMap mounted there`);
  return { text, file: `${map?.metadata.name ?? ''}/${basename(path)}` };
}

function validConfig(w: Manifest): Config {
  const { text, file } = configOf(w);
  const r = validateConfigText(text, file);
  if (r.config === undefined) throw new Error(`${file}: ${r.problems.join('; ')}`);
  return r.config;
}

/** The seconds a startup probe allows before the container is killed. */
const budgetSeconds = (p: HttpProbe | undefined): number => (p?.initialDelaySeconds ?? 0) + (p?.failureThreshold ?? 3) * (p?.periodSeconds ?? 10);

const apiVersions: Readonly<Record<string, string>> = {
  Namespace: 'v1',
  ConfigMap: 'v1',
  Service: 'v1',
  DaemonSet: 'apps/v1',
  StatefulSet: 'apps/v1',
  ServiceMonitor: 'monitoring.coreos.com/v1',
  PrometheusRule: 'monitoring.coreos.com/v1',
};

describe('deploy/kubernetes manifests', () => {
  it('parse as YAML documents, each with a known apiVersion and kind and a metadata.name', () => {
    expect([...new Set(docs.map((d) => d.file))]).toEqual([
      'configmap.yaml', 'daemonset.yaml', 'namespace.yaml', 'prometheusrule.yaml', 'service.yaml', 'servicemonitor.yaml', 'sidecar-example.yaml',
    ]);
    for (const { file, doc } of docs) {
      expect(doc.apiVersion, `${file} ${doc.kind}`).toBe(apiVersions[doc.kind]);
      expect(doc.metadata.name, file).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      if (doc.kind !== 'Namespace') expect(ofKind('Namespace').map((n) => n.metadata.name), `${file} ${doc.kind}`).toContain(doc.metadata.namespace);
    }
    expect(ofKind('DaemonSet')).toHaveLength(1);
    expect(ofKind('StatefulSet')).toHaveLength(1);
  });

  it('the DaemonSet runs on GPU nodes, reads the journal read-only and runs nvidia-smi without taking a GPU', () => {
    const ds = ofKind('DaemonSet')[0]!;
    const pod = podOf(ds);
    expect(pod.nodeSelector).toEqual({ 'nvidia.com/gpu.present': 'true' });
    expect(pod.tolerations).toContainEqual({ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' });
    expect(pod.runtimeClassName).toBe('nvidia');
    expect(pod.hostNetwork).toBe(true);
    expect(pod.hostPID).toBe(true);
    const c = watcherOf(pod);
    expect(c.env).toContainEqual({ name: 'NVIDIA_VISIBLE_DEVICES', value: 'all' });
    expect(c.env).toContainEqual({ name: 'NVIDIA_DRIVER_CAPABILITIES', value: 'utility' });
    for (const x of containersOf(pod)) {
      expect(JSON.stringify(x.resources ?? {})).not.toContain('nvidia.com/gpu');
    }
    for (const path of ['/var/log/journal', '/run/log/journal', '/etc/machine-id']) {
      const mount = c.volumeMounts?.find((m) => m.mountPath === path);
      expect(mount?.readOnly, path).toBe(true);
      expect(pod.volumes?.find((v) => v.name === mount?.name)?.hostPath?.path, path).toBe(path);
    }
    // The history outlives the pod, where the image keeps it (Dockerfile VOLUME) and the config says.
    const history = c.volumeMounts?.find((m) => m.mountPath === '/var/lib/modelwatch');
    expect(history?.readOnly).not.toBe(true);
    expect(pod.volumes?.find((v) => v.name === history?.name)?.hostPath?.path).toBe('/var/lib/modelwatch');
    expect(readFileSync(join(root, 'Dockerfile'), 'utf8')).toMatch(/^VOLUME \["\/var\/lib\/modelwatch"\]$/m);
    expect(dirname(validConfig(ds).history.path)).toBe('/var/lib/modelwatch');
    expect(validConfig(ds).gpu.enabled).toBe(true);
  });

  it('every modelwatch container runs as the image user, non-root, on a read-only root file system', () => {
    let checked = 0;
    for (const w of workloads) {
      for (const c of containersOf(podOf(w)).filter((x) => x.image.includes('modelwatch'))) {
        const sc = c.securityContext;
        expect(sc?.readOnlyRootFilesystem, c.name).toBe(true);
        expect(sc?.allowPrivilegeEscalation, c.name).toBe(false);
        expect(sc?.capabilities?.drop, c.name).toEqual(['ALL']);
        if (sc?.runAsUser === 0) {
          // The one root step: giving the hostPath history directory to the image's user, with CAP_CHOWN only.
          expect(c.name).toBe('history-owner');
          expect(sc.capabilities?.add).toEqual(['CHOWN']);
          expect(podOf(w).initContainers?.map((x) => x.name)).toContain(c.name);
          expect(c.restartPolicy).toBeUndefined();
        } else {
          expect(sc?.runAsNonRoot, c.name).toBe(true);
          expect(sc?.runAsUser, c.name).toBe(1000);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(3);
  });

  it("each embedded configuration passes modelwatch's validation and listens where the pod's port and probes point", () => {
    expect(ofKind('ConfigMap').filter((m) => m.data?.['modelwatch.yaml'] !== undefined)).toHaveLength(2);
    for (const w of workloads) {
      const config = validConfig(w);
      const c = watcherOf(podOf(w));
      expect(config.listen.host, w.metadata.name).toBe('0.0.0.0');
      expect(c.ports?.find((p) => p.name === 'metrics')?.containerPort, w.metadata.name).toBe(config.listen.port);
      expect(config.listen.port).toBe(9464);
      // The history directory is a writable volume: the root file system is read-only.
      const mount = c.volumeMounts?.find((m) => m.mountPath === dirname(config.history.path));
      expect(mount, w.metadata.name).toBeDefined();
      expect(mount?.readOnly).not.toBe(true);
    }
  });

  it('probes and scrape paths point at real routes of the daemon each pod runs', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'mw-k8s-'));
    const serviceMonitor = ofKind('ServiceMonitor')[0]!;
    const scrapePaths = (serviceMonitor.spec?.endpoints ?? []).map((e) => e.path ?? '/metrics');
    expect(scrapePaths).toEqual(['/metrics']);
    let probed = 0;
    try {
      for (const w of workloads) {
        const validated = validConfig(w);
        const config: Config = { ...validated, history: { ...validated.history, path: join(tmp, `${w.metadata.name}.db`) }, gpu: { ...validated.gpu, enabled: false } };
        const daemon = await startDaemon(config, {
          listen: { host: '127.0.0.1', port: 0 },
          logLevel: false,
          journalctl: '/bin/true',
          systemctl: join(root, 'test', 'fakes', 'systemctl'),
        });
        try {
          const pod = podOf(w);
          const watcher = watcherOf(pod);
          const ports = new Set<number | string>([config.listen.port, ...(watcher.ports ?? []).filter((p) => p.containerPort === config.listen.port).flatMap((p) => (p.name === undefined ? [] : [p.name]))]);
          for (const c of containersOf(pod)) {
            for (const [kind, probe] of [['startup', c.startupProbe], ['liveness', c.livenessProbe], ['readiness', c.readinessProbe]] as const) {
              const get = probe?.httpGet;
              // A named port belongs to the probing container; a number may be any container's of the pod.
              if (get === undefined || !ports.has(get.port) || (typeof get.port === 'string' && c !== watcher)) continue;
              const what = `${w.metadata.name}/${c.name} ${kind} GET ${get.path}`;
              const res = await fetch(`${daemon.address}${get.path}`);
              const body = (await res.json()) as Record<string, unknown>;
              const gate = /^\/api\/v1\/targets\/([^/]+)\/ready$/.exec(get.path);
              if (gate !== null) {
                expect(Object.keys(config.targets), what).toContain(gate[1]);
                // A known target: 503 until it is ready and verified (never 404).
                expect([200, 503], what).toContain(res.status);
                expect(typeof body['ready'], what).toBe('boolean');
              } else {
                expect(get.path, what).toBe('/healthz');
                expect(res.status, what).toBe(200);
                expect(body['status'], what).toBe('ok');
              }
              probed++;
            }
          }
          for (const path of scrapePaths) {
            const res = await fetch(`${daemon.address}${path}`);
            expect(res.status).toBe(200);
            expect(await res.text()).toContain('modelwatch_build_info');
          }
        } finally {
          await daemon.close();
        }
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    // DaemonSet: liveness + readiness; sidecar: startup + liveness + readiness, and vllm's gate.
    expect(probed).toBe(6);
  }, 30_000);

  it('the ServiceMonitor finds every modelwatch Service, whose metrics port is a container port of the pods it selects', () => {
    const sm = ofKind('ServiceMonitor')[0]!;
    const selector = (sm.spec?.selector as { matchLabels?: Record<string, string> } | undefined)?.matchLabels;
    const services = ofKind('Service').filter((s) => isSubset(selector, s.metadata.labels ?? {}));
    expect(services.map((s) => s.metadata.name).sort()).toEqual(['kimi-k2-5-modelwatch', 'modelwatch']);
    for (const s of services) {
      expect(sm.spec?.namespaceSelector?.matchNames).toContain(s.metadata.namespace);
      const port = s.spec?.ports?.find((p) => p.name === sm.spec?.endpoints?.[0]?.port);
      expect(port, s.metadata.name).toBeDefined();
      const pods = workloads.filter((w) => w.metadata.namespace === s.metadata.namespace && isSubset(s.spec?.selector as Record<string, string>, w.spec?.template?.metadata.labels ?? {}));
      expect(pods, s.metadata.name).toHaveLength(1);
      const target = containersOf(podOf(pods[0]!)).flatMap((c) => c.ports ?? []).find((p) => p.name === port?.targetPort || p.containerPort === port?.targetPort);
      expect(target?.containerPort, s.metadata.name).toBe(9464);
    }
    // A loading pod is not Ready, and its load is what must be scraped.
    expect(services.find((s) => s.metadata.name === 'kimi-k2-5-modelwatch')?.spec?.publishNotReadyAddresses).toBe(true);
  });

  it("sidecar: vLLM's readiness is modelwatch's gate, the log file is shared, and the deadlines match the probe and vLLM's timeout", () => {
    const sts = ofKind('StatefulSet')[0]!;
    const pod = podOf(sts);
    const config = validConfig(sts);
    const vllm = pod.containers.find((c) => c.name === 'vllm')!;
    const sidecar = watcherOf(pod);
    // A native sidecar: an init container that keeps running, started after the log file exists.
    expect(sidecar.restartPolicy).toBe('Always');
    const inits = pod.initContainers?.map((c) => c.name) ?? [];
    expect(inits.indexOf('log-file')).toBeLessThan(inits.indexOf(sidecar.name));
    expect(inits.indexOf('log-file')).toBeGreaterThanOrEqual(0);
    expect(sidecar.startupProbe?.httpGet?.path).toBe('/healthz');

    const [name, target] = Object.entries(config.targets)[0]!;
    expect(vllm.readinessProbe?.httpGet).toEqual({ path: `/api/v1/targets/${name}/ready`, port: config.listen.port });
    expect(target.url).toBe('http://127.0.0.1:8000');
    expect(vllm.ports?.find((p) => p.name === 'http')?.containerPort).toBe(8000);
    expect(target.logs.kind).toBe('file');
    const logPath = target.logs.kind === 'file' ? target.logs.path : '';
    // The file lies on one volume that vllm writes (its whole output, through tee) and the sidecar reads.
    const mountOf = (c: Container) => c.volumeMounts?.find((m) => m.mountPath === dirname(logPath));
    expect(mountOf(vllm)?.name).toBeDefined();
    expect(mountOf(sidecar)?.name).toBe(mountOf(vllm)?.name);
    expect(pod.volumes?.find((v) => v.name === mountOf(vllm)?.name)?.emptyDir).toBeDefined();
    expect(vllm.args?.join('\n')).toContain(`exec > >(tee -a ${logPath}) 2>&1`);
    const logFile = pod.initContainers?.find((c) => c.name === 'log-file');
    expect(logFile?.command?.join(' ')).toContain(`'${logPath}'`);

    // vLLM refuses connections while loading: liveness waits for a startupProbe whose budget is the one modelwatch watches.
    expect(vllm.startupProbe?.httpGet?.path).toBe('/health');
    expect(vllm.livenessProbe?.httpGet?.path).toBe('/health');
    const deadlines = (target as { deadlines?: Record<string, number> }).deadlines ?? {};
    expect(deadlines['startup_probe']).toBe(budgetSeconds(vllm.startupProbe) * 1000);
    const engineTimeout = Number(vllm.env?.find((e) => e.name === 'VLLM_ENGINE_READY_TIMEOUT_S')?.value);
    expect(deadlines['engine_ready_timeout']).toBe(engineTimeout * 1000);
    expect(budgetSeconds(vllm.startupProbe)).toBeGreaterThan(36 * 60);
    expect(vllm.resources?.limits?.['nvidia.com/gpu']).toBe(8);
  });
});

describe('deploy/kubernetes/prometheusrule.yaml', () => {
  const rulesText = readFileSync(join(root, rulesFile), 'utf8');
  const committed = readFileSync(join(root, prometheusRuleFile), 'utf8');

  it('is what `npm run k8s` generates from the rules file (regenerate after editing the rules)', () => {
    expect(committed).toBe(prometheusRule(rulesText));
  });

  it('carries exactly the groups of the rules file', () => {
    const rule = parse(committed) as Manifest;
    const groups = (parse(rulesText) as { groups: unknown[] }).groups;
    expect(groups.length).toBeGreaterThan(0);
    expect(rule.spec?.groups).toEqual(groups);
  });

  it('rejects a file without rule groups', () => {
    expect(() => prometheusRule('groups: []\n')).toThrow(/no rule groups/);
    expect(() => prometheusRule('groups: [\n')).toThrow(/not valid YAML/);
  });

  const havePromtool = spawnSync('promtool', ['--version']).status === 0;
  it.runIf(havePromtool)('holds rules that pass promtool check rules', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'mw-k8s-rules-'));
    try {
      const file = join(tmp, 'rules.yml');
      writeFileSync(file, stringify({ groups: (parse(committed) as Manifest).spec?.groups }));
      const res = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect(res.stderr).toBe('');
      expect(res.status).toBe(0);
      expect(res.stdout).toMatch(/SUCCESS: [1-9]\d* rules found/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
