# paylink's container image. Two stages: the build compiles TypeScript and builds better-sqlite3's
# native module against the image's own Node headers; the runtime holds dist/ (the bundle that
# `paylink` runs, and the compiled sources), the production dependencies (the bundle's external
# packages among them) and the vendored docs bundle, and runs as a user of its own.
#
#   docker build --build-arg VERSION="$(node -p 'require("./package.json").version')" -t paylink .
#
# NODE_IMAGE: the base of both stages, the official image of the project's Node line by default.
# A Debian-based image is expected (apt-get, useradd); CI builds FROM a local bookworm base.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
# better-sqlite3 compiles where no prebuilt binary can be fetched: a compiler, make and Python.
RUN if ! command -v g++ >/dev/null || ! command -v make >/dev/null || ! command -v python3 >/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends g++ make python3 && rm -rf /var/lib/apt/lists/*; \
    fi
# node-gyp compiles against the headers the Node image ships instead of downloading them.
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json ./
# A build behind a TLS-inspecting proxy passes its CA bundle as the secret npm_ca
# (--secret id=npm_ca,src=…): used by this step only, never stored in a layer.
RUN --mount=type=secret,id=npm_ca,required=false \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca npm_config_cafile=/run/secrets/npm_ca; fi; \
    npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY simulator ./simulator
COPY scripts ./scripts
COPY test/helpers ./test/helpers
RUN node bin/build.js && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
ARG VERSION=unknown
LABEL org.opencontainers.image.title="paylink" \
      org.opencontainers.image.description="Payment links and verified Midtrans notifications for an ERP, with a durable signed outbox" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 10001 paylink \
 && useradd --system --uid 10001 --gid paylink --home-dir /app --no-create-home --shell /usr/sbin/nologin paylink \
 && mkdir -p /data /logs && chown paylink:paylink /data /logs && chmod 0750 /data /logs
WORKDIR /app
# The application files stay root's: the service can write its volumes only.
COPY --from=build /src/package.json ./package.json
# The version label is package.json's, passed as VERSION: any other value is refused (left unset, as
# a plain `docker compose build` leaves it, the label says "unknown").
RUN node -e 'const v = require("/app/package.json").version, a = process.env.VERSION; if (a !== "unknown" && a !== v) { console.error(`VERSION=${a} but package.json says ${v}`); process.exit(1); }'
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY --from=build /src/dist/bundle ./dist/bundle
COPY --from=build /src/dist/simulator ./dist/simulator
COPY bin ./bin
COPY vendor ./vendor
COPY LICENSE ./LICENSE
RUN ln -s /app/bin/paylink.js /usr/local/bin/paylink
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    LOG_DIR=/logs
USER paylink
EXPOSE 3000
VOLUME ["/data", "/logs"]
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live',{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["paylink", "serve"]
