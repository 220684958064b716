# syntax=docker/dockerfile:1
# Skybridge: one image for the proxy (the entrypoint) and the operator (an alternate command).
#
#   docker build -t skybridge .
#   docker run -p 8080:8080 -e OPENAI_API_KEY=sk-... skybridge                  # proxy, any proxy flag after the image
#   docker run skybridge --kube-namespace skybridge                              # proxy following the operator
#   docker run --entrypoint node skybridge dist/operator/src/main.js --namespace skybridge   # operator
#
# In Kubernetes the chart (charts/skybridge) sets `command: [node, dist/operator/src/main.js]` for the
# operator. The image runs compiled JavaScript (npm run build), not the TypeScript sources.
ARG NODE_IMAGE=node:24-bookworm-slim

# Compile: every dependency (TypeScript is a dev dependency), then tsc into dist/.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY proxy ./proxy
COPY operator ./operator
COPY scripts/vendor-bundle.ts scripts/gateway-bundle.ts ./scripts/
RUN npm run build

# Runtime dependencies only (the pinned `node` package is a dev dependency: the base image is Node 24).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
# glibc gives each thread that allocates an arena of its own (up to 8 per core), and node's V8 and
# libuv threads keep 2-4 MB in them once the first requests have compiled their code. Two arenas
# hold the same in less (idle RSS 2.5 MB less); read by glibc at process start, so set here and by
# `npm start`, not by the gateway itself. A fixed mmap threshold (glibc's default, which it otherwise
# raises after each large free, up to 32 MB) keeps the start's large transient blocks out of the
# heap, and freed memory at the heap's top goes back: idle RSS 7 MB less, no more memory syscalls
# or page faults per request.
ENV MALLOC_ARENA_MAX=2
ENV MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The code-mode sandbox (committed WebAssembly, built from starlark-wasm/), next to its loader.
COPY --from=build /app/proxy/src/mcp/code-mode/starlark.wasm ./dist/proxy/src/mcp/code-mode/
# The dashboard (committed build, content-hashed assets; checked against dashboard/src by the tests).
COPY dashboard/dist ./dashboard/dist
COPY package.json ./
# The base image's `node` user, by number so Kubernetes can check runAsNonRoot. Nothing is written
# at run time: the chart mounts the root filesystem read-only.
USER 1000:1000
EXPOSE 8080
# The same V8 flag as `npm start` (a smaller young generation: less memory per proxy).
ENTRYPOINT ["node", "--max-semi-space-size=8", "dist/proxy/src/main.js"]
