// OpenAPI specifications driven by GitBook's official TypeScript client (npm `@gitbook/api`)
// against a quire server: every operation of the "OpenAPI specs and versions" table, with a
// specification given as text (so that no URL has to be reachable from the server), waited for
// until processed. Prints each call that fails (the client throws on any non-2xx answer) and a
// summary; exits 1 on a failure.
//
//   node tools/gitbook-client/openapi-workflow.mjs --client DIR --endpoint URL --token TOKEN --org ORG
//
// DIR is an installed `@gitbook/api` (`npm install @gitbook/api@0.202.0`); the client is not
// part of quire.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const args = Object.fromEntries(
    process.argv.slice(2).reduce((pairs, arg, i, all) => {
        if (arg.startsWith('--')) pairs.push([arg.slice(2), all[i + 1]]);
        return pairs;
    }, []),
);
for (const name of ['client', 'endpoint', 'token', 'org']) {
    if (!args[name]) {
        console.error(`missing --${name}`);
        process.exit(2);
    }
}
const { GitBookAPI } = await import(pathToFileURL(join(args.client, 'dist', 'index.js')).href);
const api = new GitBookAPI({ endpoint: args.endpoint, authToken: args.token });
const anonymous = new GitBookAPI({ endpoint: args.endpoint });
const org = args.org;

const failures = [];
let calls = 0;
async function call(name, run) {
    calls += 1;
    try {
        const res = await run();
        return res?.data ?? null;
    } catch (e) {
        const status = e?.code ?? e?.status ?? '?';
        failures.push(`${name}: ${status} ${e?.message ?? e}`);
        return undefined;
    }
}
function check(name, ok, detail) {
    calls += 1;
    if (!ok) failures.push(`${name}: ${detail}`);
}

const slug = `pets-${Date.now()}`;
const text = JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'Pets', version: '1' },
    tags: [{ name: 'pets' }],
    paths: { '/pets': { get: { tags: ['pets'], summary: 'List pets', responses: { 200: { description: 'The pets' } } } } },
});

async function processed(name) {
    const deadline = Date.now() + 30_000;
    for (;;) {
        const spec = await call(`getOpenApiSpecBySlug (${name})`, () => api.orgs.getOpenApiSpecBySlug(org, slug));
        if (!spec || spec.processingState === 'complete') return spec;
        if (Date.now() > deadline) {
            failures.push(`${name}: still ${spec.processingState} after 30 s`);
            return spec;
        }
        await new Promise((r) => setTimeout(r, 100));
    }
}

const created = await call('createOpenApiSpec', () => api.orgs.createOpenApiSpec(org, { slug, source: { text } }));
check('createOpenApiSpec state', created?.processingState === 'pending', JSON.stringify(created));
const spec = await processed('first version');
check('processed without error', spec && !spec.lastProcessErrorCode, JSON.stringify(spec));
await call('listOpenApiSpecs', () => api.orgs.listOpenApiSpecs(org, {}));
const latest = await call('getLatestOpenApiSpecVersion', () => api.orgs.getLatestOpenApiSpecVersion(org, slug));
check('lastVersion is the latest', latest?.id === spec?.lastVersion, `${latest?.id} vs ${spec?.lastVersion}`);
const content = await call('getLatestOpenApiSpecVersionContent', () => api.orgs.getLatestOpenApiSpecVersionContent(org, slug));
check(
    'content is the filesystem GitBook renders',
    Array.isArray(content?.filesystem) && content.filesystem[0]?.isEntrypoint && content.filesystem[0]?.specification?.info?.title === 'Pets',
    JSON.stringify(content)?.slice(0, 300),
);
const raw = await call('getLatestOpenApiSpecVersionContentRaw', () => api.orgs.getLatestOpenApiSpecVersionContentRaw(org, slug));
check('raw content is the text', raw?.text === text && raw?.format === 'json', JSON.stringify(raw)?.slice(0, 300));
await call('getOpenApiSpecVersionById', () => api.orgs.getOpenApiSpecVersionById(org, slug, latest?.id));
await call('getOpenApiSpecVersionContentById', () => api.orgs.getOpenApiSpecVersionContentById(org, slug, latest?.id));

await call('createOrUpdateOpenApiSpecBySlug', () =>
    api.orgs.createOrUpdateOpenApiSpecBySlug(org, slug, { source: { text: text.replace('List pets', 'List all pets') } }),
);
const second = await processed('second version');
check('a changed text makes a version', second?.lastVersion && second.lastVersion !== spec?.lastVersion, JSON.stringify(second));
const versions = await call('listOpenApiSpecVersions', () => api.orgs.listOpenApiSpecVersions(org, slug, {}));
check('two versions', versions?.items?.length === 2, JSON.stringify(versions));

await call('updateOpenApiSpecBySlug (public)', () => api.orgs.updateOpenApiSpecBySlug(org, slug, { visibility: 'public' }));
const open = await call('getLatestOpenApiSpecVersionContent (no token)', () =>
    anonymous.orgs.getLatestOpenApiSpecVersionContent(org, slug),
);
check('public content without a token', Array.isArray(open?.filesystem), JSON.stringify(open)?.slice(0, 300));
await call('deleteOpenApiSpecBySlug', () => api.orgs.deleteOpenApiSpecBySlug(org, slug));

for (const f of failures) console.error(`FAILED ${f}`);
console.log(`${calls - failures.length}/${calls} calls succeeded`);
process.exit(failures.length ? 1 : 0);
