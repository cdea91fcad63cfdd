// The speech API's replies against docs/openapi.yaml. openApiChecker loads
// the document (checked first against the OpenAPI 3.1 schema by
// @seriousme/openapi-schema-validator) and returns a fetch that records
// every reply it passes on and checks it against the document with Ajv
// (JSON Schema 2020-12, the dialect of OpenAPI 3.1):
//
//   - the path, method and status are documented;
//   - Content-Type is one of the response's media types (type/subtype
//     equal, and every parameter the media type names present with its value);
//   - every required header is there, every documented header present has
//     a value its schema accepts, and no X- header is undocumented (a
//     renamed header fails twice: undocumented, and never seen — below);
//   - a JSON body validates against its schema, and each server-sent event
//     of a text/event-stream reply against the media type's x-item-schema.
//
// summary() adds one check over the whole run: every header documented for
// a response the run saw appeared in at least one of its replies, so the
// document describes nothing the server no longer sends.
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import { parse } from 'yaml';

const SPEC_ID = 'https://proscenium.invalid/openapi.yaml';

export async function openApiChecker(specPath) {
  const meta = new Validator();
  const spec = parse(readFileSync(specPath, 'utf8'));
  const res = await meta.validate(structuredClone(spec));
  if (!res.valid) throw new Error(`${specPath} is not a valid OpenAPI ${meta.version ?? ''} document: ${JSON.stringify(res.errors)}`);

  // The document is one schema resource: "#/components/..." refs resolve
  // inside it, and each schema compiles by its JSON pointer.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ $id: SPEC_ID, ...spec, openapi: undefined, 'x-policy-headers': undefined });
  const compiled = new Map();
  const validatorAt = (pointer) => {
    // A URI fragment: each JSON pointer segment percent-encoded.
    const fragment = pointer.split('/').map(encodeURIComponent).join('/');
    if (!compiled.has(pointer)) compiled.set(pointer, ajv.getSchema(`${SPEC_ID}#${fragment}`));
    return compiled.get(pointer);
  };
  const escape = (s) => s.replaceAll('~', '~0').replaceAll('/', '~1');
  const resolve = (node, pointer) => {
    while (node && node.$ref) {
      pointer = node.$ref.slice(1);
      node = pointer.split('/').slice(1).reduce((n, k) => n[k.replaceAll('~1', '/').replaceAll('~0', '~')], spec);
    }
    return { node, pointer };
  };

  const replies = []; // {where, problems}
  const seen = new Map(); // "METHOD path status" → {headers: documented names, seen: Set}

  function mediaTypeOf(s) {
    const [essence, ...params] = s.split(';').map((p) => p.trim());
    return { essence: essence.toLowerCase(), params: new Map(params.map((p) => p.split('=').map((x) => x.trim().toLowerCase()))) };
  }

  function validate(pointer, value, what, problems) {
    const v = validatorAt(pointer);
    if (!v) {
      problems.push(`${what}: no schema at ${pointer}`);
      return;
    }
    if (!v(value)) problems.push(`${what} does not match ${pointer}: ${ajv.errorsText(v.errors)}`);
  }

  /** A header's string value as its schema's type: numbers must be numbers. */
  function headerValue(schema, raw) {
    const t = schema?.type;
    if (t === 'integer' || t === 'number') return /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
    return raw;
  }

  function checkHeaders(response, respPointer, headers, problems, key, trailersOnly = false) {
    const documented = Object.entries(response.headers ?? {}).map(([name, h]) => {
      const r = resolve(h, `${respPointer}/headers/${escape(name)}`);
      return { name: name.toLowerCase(), header: r.node, pointer: r.pointer };
    });
    const rec = seen.get(key) ?? { headers: documented.map((d) => d.name), seen: new Set() };
    seen.set(key, rec);
    for (const d of documented) {
      const raw = headers.get(d.name);
      if (raw === null || raw === undefined) {
        if (d.header.required && !trailersOnly) problems.push(`required header ${d.name} is missing`);
        continue;
      }
      rec.seen.add(d.name);
      validate(`${d.pointer}/schema`, headerValue(d.header.schema, raw), `header ${d.name}: ${JSON.stringify(raw)}`, problems);
    }
    for (const [name] of headers) {
      if (name.toLowerCase().startsWith('x-') && !documented.some((d) => d.name === name.toLowerCase())) {
        problems.push(`header ${name} is not documented for this response`);
      }
    }
  }

  function responseFor(method, url, status, problems) {
    const path = new URL(url).pathname;
    const op = spec.paths?.[path]?.[method.toLowerCase()];
    if (!op) {
      problems.push(`${method} ${path} is not documented`);
      return null;
    }
    const opPointer = `/paths/${escape(path)}/${method.toLowerCase()}`;
    const code = String(status);
    const which = code in op.responses ? code : `${code[0]}XX` in op.responses ? `${code[0]}XX` : 'default' in op.responses ? 'default' : null;
    if (!which) {
      problems.push(`status ${status} is not documented for ${method} ${path}`);
      return null;
    }
    const { node, pointer } = resolve(op.responses[which], `${opPointer}/responses/${which}`);
    return { response: node, pointer, key: `${method} ${path} ${which}` };
  }

  async function check(method, url, resp) {
    const problems = [];
    const where = `${method} ${new URL(url).pathname} → ${resp.status}`;
    const found = responseFor(method, url, resp.status, problems);
    if (found) {
      const { response, pointer, key } = found;
      checkHeaders(response, pointer, resp.headers, problems, key);
      const ct = resp.headers.get('content-type');
      const body = await resp.text();
      const content = response.content ?? {};
      if (!ct) {
        if (body.length > 0 || Object.keys(content).length > 0) problems.push('no Content-Type');
      } else {
        const got = mediaTypeOf(ct);
        const match = Object.keys(content).find((k) => {
          const want = mediaTypeOf(k);
          return want.essence === got.essence && [...want.params].every(([p, v]) => got.params.get(p) === v);
        });
        if (!match) {
          problems.push(`Content-Type ${ct} is not one of ${Object.keys(content).join(', ')}`);
        } else {
          const mtPointer = `${pointer}/content/${escape(match)}`;
          if (got.essence === 'application/json') {
            let value;
            try {
              value = JSON.parse(body);
            } catch (e) {
              problems.push(`body is not JSON: ${e.message}`);
            }
            if (value !== undefined) validate(`${mtPointer}/schema`, value, 'body', problems);
          } else if (got.essence === 'text/event-stream') {
            const item = content[match]['x-item-schema'];
            if (!item) problems.push(`${match} has no x-item-schema`);
            const events = body.split('\n\n').filter((e) => e !== '');
            if (events.length === 0) problems.push('no events');
            events.forEach((e, i) => {
              if (!e.startsWith('data: ')) {
                problems.push(`event ${i} is not one data line: ${JSON.stringify(e.slice(0, 80))}`);
                return;
              }
              let value;
              try {
                value = JSON.parse(e.slice(6));
              } catch (err) {
                problems.push(`event ${i} is not JSON: ${err.message}`);
                return;
              }
              if (item) validate(`${mtPointer}/x-item-schema`, value, `event ${i}`, problems);
            });
          }
        }
      }
    }
    replies.push({ where, problems });
    return problems;
  }

  /** Trailers of a streamed reply: each a documented header of that response, with a valid value. */
  function checkTrailers(method, url, status, trailers) {
    const problems = [];
    const found = responseFor(method, url, status, problems);
    if (found) checkHeaders(found.response, found.pointer, new Headers(trailers), problems, found.key, true);
    replies.push({ where: `${method} ${new URL(url).pathname} → ${status} (trailers)`, problems });
    return problems;
  }

  /** fetch that checks every reply (on a copy of its body) before handing it on. */
  async function checkedFetch(input, init = {}) {
    const url = input instanceof Request ? input.url : String(input);
    const method = (init.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const resp = await fetch(input, init);
    await check(method, url, resp.clone());
    return resp;
  }

  function summary() {
    const problems = [];
    for (const [key, rec] of seen) {
      for (const name of rec.headers) {
        if (!rec.seen.has(name)) problems.push(`${key}: documented header ${name} never appeared`);
      }
    }
    return { replies, problems };
  }

  return { fetch: checkedFetch, checkTrailers, summary };
}
