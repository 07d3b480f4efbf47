// Opens the exported fixture site in headless Chromium through the DevTools protocol, checks
// what a reader does (theme toggle, sidebar levels loaded on demand, search as you type, tabs
// and the menu without script, the skip link, no request to another host, no script error),
// and keeps screenshots in target/reader-screenshots/. Run by run.sh, which exports and serves
// the site first. Needs Node 20+ (--experimental-websocket) and Debian's chromium.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const base = process.argv[2] ?? "http://127.0.0.1:8099";
const out = process.argv[3] ?? "target/reader-screenshots";
mkdirSync(out, { recursive: true });

const chromium = spawn("chromium", [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
  `--user-data-dir=${mkdtempSync(join(tmpdir(), "reader-"))}`, "--remote-debugging-port=0", "about:blank",
]);
const endpoint = await new Promise((resolve, reject) => {
  let text = "";
  chromium.stderr.on("data", (chunk) => {
    text += chunk;
    const found = text.match(/DevTools listening on (ws:\/\/\S+)/);
    if (found) resolve(found[1]);
  });
  setTimeout(() => reject(new Error("chromium did not start:\n" + text)), 20000);
});

const socket = new WebSocket(endpoint);
await new Promise((resolve) => socket.addEventListener("open", resolve));
let nextId = 0;
const pending = new Map();
const listeners = [];
socket.addEventListener("message", (event) => {
  const message = JSON.parse(event.data);
  if (message.id && pending.has(message.id)) {
    const { resolve, reject } = pending.get(message.id);
    pending.delete(message.id);
    message.error ? reject(new Error(JSON.stringify(message.error))) : resolve(message.result);
  } else {
    listeners.forEach((listener) => listener(message));
  }
});
function send(method, params = {}, sessionId) {
  const id = ++nextId;
  socket.send(JSON.stringify({ id, method, params, sessionId }));
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const { targetId } = await send("Target.createTarget", { url: "about:blank" });
const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
const page = (method, params) => send(method, params, sessionId);
await page("Page.enable");
await page("Runtime.enable");
await page("Network.enable");

const requests = [];
const errors = [];
listeners.push((message) => {
  if (message.method === "Network.requestWillBeSent") requests.push(message.params.request.url);
  if (message.method === "Runtime.exceptionThrown") errors.push(JSON.stringify(message.params.exceptionDetails));
});

async function view(width, height, dark) {
  await page("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile: width < 500 });
  await page("Emulation.setEmulatedMedia", {
    features: [{ name: "prefers-color-scheme", value: dark ? "dark" : "light" }],
  });
}
async function open(path) {
  const loaded = new Promise((resolve) => {
    const listener = (message) => {
      if (message.method === "Page.loadEventFired") {
        listeners.splice(listeners.indexOf(listener), 1);
        resolve();
      }
    };
    listeners.push(listener);
  });
  await page("Page.navigate", { url: base + path });
  await loaded;
  await sleep(200);
}
async function js(expression) {
  const { result, exceptionDetails } = await page("Runtime.evaluate", {
    expression, awaitPromise: true, returnByValue: true,
  });
  if (exceptionDetails) throw new Error(expression + ": " + JSON.stringify(exceptionDetails));
  return result.value;
}
async function shot(name) {
  const { data } = await page("Page.captureScreenshot", { format: "png" });
  writeFileSync(join(out, name + ".png"), Buffer.from(data, "base64"));
}
let failed = 0;
function check(what, ok) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failed++;
}
async function resetTheme() {
  await js("localStorage.clear()");
}

const pages = [
  ["home", "/"],
  ["quickstart", "/quickstart"],
  ["writing", "/guides/writing"],
  ["code", "/guides/writing/code"],
  ["tables", "/guides/writing/tables"],
  ["media", "/guides/media"],
  ["changelog", "/reference/changelog"],
  ["not-found", "/404.html"],
];
for (const [width, height, label] of [[1280, 900, "desktop"], [360, 740, "phone"]]) {
  for (const dark of [false, true]) {
    await view(width, height, dark);
    for (const [name, path] of pages) {
      await open(path);
      await shot(`${name}-${label}-${dark ? "dark" : "light"}`);
    }
  }
}

// The theme toggle: switches, is remembered, and applies before the first paint.
await view(1280, 900, false);
await open("/guides/writing/code");
await resetTheme();
await open("/guides/writing/code");
check("theme toggle shown", await js("!document.querySelector('.theme-toggle').hidden"));
await js("document.querySelector('.theme-toggle').click()");
check("toggle switches to dark", await js("document.documentElement.dataset.theme === 'dark'"));
check("toggle pressed state", await js("document.querySelector('.theme-toggle').getAttribute('aria-pressed') === 'true'"));
await open("/quickstart");
check("dark theme remembered on the next page", await js("document.documentElement.dataset.theme === 'dark'"));
await shot("theme-toggled-dark");
await resetTheme();

// A collapsed sidebar level loads on demand.
await open("/");
check("collapsed entry has a toggle", await js("!!document.querySelector('li[data-id] > .toggle[aria-expanded=false]')"));
await js("document.querySelector('li[data-id] > .toggle').click()");
await sleep(400);
check("level loaded", await js("[...document.querySelectorAll('li[data-id] > ul a')].some(a => a.textContent === 'Code samples')"));
check("toggle expanded", await js("document.querySelector('li[data-id] > .toggle').getAttribute('aria-expanded') === 'true'"));
await shot("sidebar-level-loaded");

// Search as you type.
await js("const input = document.getElementById('q-search'); input.focus(); input.value = 'install'; input.dispatchEvent(new Event('input'))");
await sleep(600);
check("search results shown", await js("!document.getElementById('q-search-results').hidden && document.getElementById('q-search-results').textContent.includes('Quick start')"));
await page("Input.dispatchKeyEvent", { type: "keyDown", key: "ArrowDown", code: "ArrowDown", windowsVirtualKeyCode: 40 });
check("arrow key moves into the results", await js("document.activeElement.closest('#q-search-results') !== null"));
await shot("search-as-you-type");

// Tabs switch without script: the label is a radio button's.
await open("/guides/writing/code");
await js("[...document.querySelectorAll('.tabs > label')].find(l => l.textContent === 'Python').click()");
check("tab switched", await js("[...document.querySelectorAll('.tab-panel')].filter(p => getComputedStyle(p).display !== 'none').map(p => p.textContent).join('').includes('def title')"));
await shot("tabs-python");

// Keyboard: the first Tab reaches the skip link.
await open("/guides/writing");
await page("Input.dispatchKeyEvent", { type: "keyDown", key: "Tab", code: "Tab", windowsVirtualKeyCode: 9 });
await page("Input.dispatchKeyEvent", { type: "keyUp", key: "Tab", code: "Tab", windowsVirtualKeyCode: 9 });
check("first Tab focuses the skip link", await js("document.activeElement.classList.contains('skip')"));
await shot("skip-link-focused");

// The phone menu opens without script (the sidebar is the target of the menu link).
await view(360, 740, false);
await open("/guides/writing/code#q-sidebar");
check("phone menu covers the page", await js("getComputedStyle(document.getElementById('q-sidebar')).position === 'fixed'"));
await shot("phone-menu-open");
await open("/guides/writing/code");
check("no horizontal scrolling at 360 px", await js("document.documentElement.scrollWidth <= 360"));

const foreign = requests.filter((url) => !url.startsWith(base) && !url.startsWith("data:") && url !== "about:blank");
check(`no request to another host (${requests.length} requests)`, foreign.length === 0);
foreign.forEach((url) => console.log("     " + url));
check("no script error", errors.length === 0);
errors.forEach((error) => console.log("     " + error));

socket.close();
chromium.kill();
console.log(`${failed === 0 ? "all checks passed" : failed + " checks failed"}; screenshots in ${out}`);
process.exit(failed === 0 ? 0 : 1);
