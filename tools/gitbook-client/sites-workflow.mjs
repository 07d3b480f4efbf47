// A docs-site workflow driven by GitBook's official TypeScript client (npm `@gitbook/api`)
// against a quire server: what a team moving off GitBook would run, call by call. Prints each
// call that fails (the client throws on any non-2xx answer) and a summary; exits 1 on a failure.
//
//   node tools/gitbook-client/sites-workflow.mjs --client DIR --endpoint URL --token TOKEN --org ORG
//
// DIR is an installed `@gitbook/api` (its folder, with its dependencies beside it, as
// `npm install @gitbook/api@0.202.0` leaves them); the client is not part of quire.
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
const org = args.org;

const failures = [];
let calls = 0;
async function call(name, run) {
    calls += 1;
    try {
        const res = await run();
        return res?.data;
    } catch (e) {
        const status = e?.code ?? e?.status ?? '?';
        failures.push(`${name}: ${status} ${e?.message ?? e}`);
        return undefined;
    }
}

const spaceA = await call('createSpace A', () => api.orgs.createSpace(org, { title: 'Handbook' }));
const spaceB = await call('createSpace B', () => api.orgs.createSpace(org, { title: 'API reference' }));
const spaceC = await call('createSpace C', () => api.orgs.createSpace(org, { title: 'Changelog' }));

const site = await call('createSite', () => api.orgs.createSite(org, { title: 'Docs' }));
const siteId = site?.id;
await call('getSiteById', () => api.orgs.getSiteById(org, siteId));
await call('listSites', () => api.orgs.listSites(org, {}));
await call('updateSiteById', () => api.orgs.updateSiteById(org, siteId, { title: 'Acme docs', basename: `acme-${Date.now()}` }));

// Site spaces, then sections.
const ssA = await call('addSpaceToSite A', () =>
    api.orgs.addSpaceToSite(org, siteId, { spaceId: spaceA?.id, title: 'Handbook', draft: false, pageId: null }),
);
await call('listSiteSpaces', () => api.orgs.listSiteSpaces(org, siteId, {}));
await call('updateSiteSpaceById', () => api.orgs.updateSiteSpaceById(org, siteId, ssA?.id, { path: 'handbook', hidden: false, draft: false }));
const sectionA = await call('addSectionToSite A', () =>
    api.orgs.addSectionToSite(org, siteId, { spaceId: spaceB?.id, title: 'API', draft: false }),
);
const group = await call('addSectionGroupToSite', () => api.orgs.addSectionGroupToSite(org, siteId, { title: 'Reference' }));
const sectionB = await call('addSectionToSite B (in a group)', () =>
    api.orgs.addSectionToSite(org, siteId, { spaceId: spaceC?.id, title: 'Changes', siteSectionGroupId: group?.id }),
);
await call('listSiteSections', () => api.orgs.listSiteSections(org, siteId, {}));
await call('listSiteSectionGroups', () => api.orgs.listSiteSectionGroups(org, siteId, {}));
await call('updateSiteSectionById', () =>
    api.orgs.updateSiteSectionById(org, siteId, sectionA?.id, { title: 'API reference', siteSectionGroupId: group?.id }),
);
await call('updateSiteSectionGroupById', () => api.orgs.updateSiteSectionGroupById(org, siteId, group?.id, { title: 'References' }));
await call('moveSiteSection (before)', () =>
    api.orgs.moveSiteSection(org, siteId, sectionB?.id, {
        position: { before: { type: 'site-section', siteSection: sectionA?.id } },
    }),
);
await call('moveSiteSection (to the end)', () => api.orgs.moveSiteSection(org, siteId, sectionB?.id, {}));
await call('moveSiteSectionGroup (to the end)', () => api.orgs.moveSiteSectionGroup(org, siteId, group?.id, {}));
const sectionSpaces = await call('listSiteSpaces (sections)', () => api.orgs.listSiteSpaces(org, siteId, {}));
const first = sectionSpaces?.items?.[0];
if (first) {
    await call('moveSiteSpace (to the end)', () => api.orgs.moveSiteSpace(org, siteId, first.id, {}));
}
await call('getSiteStructure', () => api.orgs.getSiteStructure(org, siteId, {}));
await call('sortSiteStructure', () =>
    api.orgs.sortSiteStructure(org, siteId, { item: { type: 'site-section', id: sectionA?.id } }),
);
const link = await call('addExternalLinkToSite', () =>
    api.orgs.addExternalLinkToSite(org, siteId, { title: 'Status', url: 'https://status.example.com' }),
);
if (link) {
    await call('updateSiteExternalLinkById', () =>
        api.orgs.updateSiteExternalLinkById(org, siteId, link.id, { title: 'Service status', parent: group?.id }),
    );
    await call('sortSiteStructure (an external link)', () =>
        api.orgs.sortSiteStructure(org, siteId, { item: { type: 'site-external-link', id: link.id } }),
    );
}

// Customization, read then written back, and a site space's override.
const customization = await call('getSiteCustomizationById', () => api.orgs.getSiteCustomizationById(org, siteId, {}));
if (customization) {
    const next = { ...customization, title: 'Acme', styling: { ...customization.styling, primaryColor: { light: '#336699', dark: '#6699cc' } } };
    await call('updateSiteCustomizationById (round trip)', () => api.orgs.updateSiteCustomizationById(org, siteId, next));
}
if (first) {
    await call('getSiteSpaceCustomizationById', () => api.orgs.getSiteSpaceCustomizationById(org, siteId, first.id));
    await call('overrideSiteSpaceCustomizationById', () =>
        api.orgs.overrideSiteSpaceCustomizationById(org, siteId, first.id, { title: 'Variant', pagination: { enabled: false } }),
    );
    await call('deleteSiteSpaceCustomizationById', () => api.orgs.deleteSiteSpaceCustomizationById(org, siteId, first.id));
}

// Adaptive content.
await call('updateSiteById (adaptive)', () => api.orgs.updateSiteById(org, siteId, { adaptiveContent: { enabled: true } }));
await call('updateSiteAdaptiveSchema', () =>
    api.orgs.updateSiteAdaptiveSchema(org, siteId, {
        jsonSchema: {
            type: 'object',
            properties: {
                isBeta: { type: 'boolean', description: 'In the beta program' },
                plan: { type: 'string', enum: ['free', 'pro'], description: 'Plan' },
            },
            additionalProperties: false,
        },
    }),
);
await call('getSiteAdaptiveSchema', () => api.orgs.getSiteAdaptiveSchema(org, siteId));
await call('listSiteAdaptiveTemplateConditions', () => api.orgs.listSiteAdaptiveTemplateConditions(org, siteId));

// Publishing, share links, visitor auth, preview.
await call('getSitePublishingPreviewById', () => api.orgs.getSitePublishingPreviewById(org, siteId, {}));
await call('publishSite', () => api.orgs.publishSite(org, siteId));
await call('getPublishedContentSite', () => api.orgs.getPublishedContentSite(org, siteId, {}));
// URL lookups, as a renderer starts (the site is public here).
const siteUrl = `${args.endpoint}/s/${siteId}/`;
await call('getPublishedContentByUrl', () => api.urls.getPublishedContentByUrl({ url: siteUrl }));
await call('resolvePublishedContentByUrl', () =>
    api.urls.resolvePublishedContentByUrl({ url: siteUrl, visitor: { type: 'human', unsignedClaims: { plan: 'pro' } } }),
);
if (spaceA?.urls?.app) {
    await call('getContentByUrl', () => api.urls.getContentByUrl({ url: spaceA.urls.app }));
}
await call('updateSiteById (share-link)', () => api.orgs.updateSiteById(org, siteId, { visibility: 'share-link' }));
const share = await call('createSiteShareLink', () => api.orgs.createSiteShareLink(org, siteId, { name: 'Reviewers' }));
await call('listSiteShareLinks (search)', () => api.orgs.listSiteShareLinks(org, siteId, { search: 'rev' }));
await call('updateSiteShareLinkById', () => api.orgs.updateSiteShareLinkById(org, siteId, share?.id, { active: false }));
await call('deleteSiteShareLinkById', () => api.orgs.deleteSiteShareLinkById(org, siteId, share?.id));
await call('updateSiteById (visitor-auth)', () => api.orgs.updateSiteById(org, siteId, { visibility: 'visitor-auth' }));
await call('getSitePublishingAuthById', () => api.orgs.getSitePublishingAuthById(org, siteId));
await call('updateSitePublishingAuthById', () =>
    api.orgs.updateSitePublishingAuthById(org, siteId, {
        backend: 'custom',
        fallbackURL: 'https://login.example.com/',
        logoutURL: 'https://login.example.com/bye',
    }),
);
await call('regenerateSitePublishingAuthById', () => api.orgs.regenerateSitePublishingAuthById(org, siteId));
await call('resolvePublishedContentByUrl (visitor-auth, redirectOnError)', () =>
    api.urls.resolvePublishedContentByUrl({ url: siteUrl, redirectOnError: true }),
);

// Redirects.
const redirect = await call('createSiteRedirect', () =>
    api.orgs.createSiteRedirect(org, siteId, { source: '/old', destination: { kind: 'external', url: 'https://example.com/new' } }),
);
// To a page by its path, when the space has one (spaces made above start empty).
const pages = await call('listPages', () => api.spaces.listPages(spaceA?.id, {}));
const page = pages?.pages?.[0];
if (page) {
    await call('createSiteRedirect (to a page by path)', () =>
        api.orgs.createSiteRedirect(org, siteId, { source: '/old-page', destination: { kind: 'path', spaceId: spaceA?.id, path: page.path } }),
    );
}
await call('listSiteRedirects (search, orderBy)', () => api.orgs.listSiteRedirects(org, siteId, { search: 'old', orderBy: 'source' }));
await call('getSiteRedirectBySource', () => api.orgs.getSiteRedirectBySource(org, siteId, { source: '/old' }));
await call('updateSiteRedirectById', () => api.orgs.updateSiteRedirectById(org, siteId, redirect?.id, { permanent: true }));
await call('bulkUpsertSiteRedirects', () =>
    api.orgs.bulkUpsertSiteRedirects(org, siteId, {
        redirects: [{ source: '/older', destination: { kind: 'external', url: 'https://example.com/x' } }],
    }),
);
await call('deleteSiteRedirectById', () => api.orgs.deleteSiteRedirectById(org, siteId, redirect?.id));
await call('deleteSiteRedirectById (again)', () => api.orgs.deleteSiteRedirectById(org, siteId, redirect?.id));

// Taking it down.
await call('unpublishSite', () => api.orgs.unpublishSite(org, siteId));
if (first) {
    await call('deleteSiteSpaceById', () => api.orgs.deleteSiteSpaceById(org, siteId, first.id));
}
if (link) {
    await call('deleteSiteExternalLinkById', () => api.orgs.deleteSiteExternalLinkById(org, siteId, link.id));
}
await call('deleteSiteSectionById', () => api.orgs.deleteSiteSectionById(org, siteId, sectionB?.id));
await call('deleteSiteSectionGroupById', () => api.orgs.deleteSiteSectionGroupById(org, siteId, group?.id));
await call('deleteSiteById', () => api.orgs.deleteSiteById(org, siteId));
await call('deleteSiteById (again)', () => api.orgs.deleteSiteById(org, siteId));

for (const failure of failures) console.log(`FAIL ${failure}`);
console.log(`${calls - failures.length}/${calls} calls succeeded`);
process.exit(failures.length ? 1 : 0);
