# The lbdns image: the built directory (scripts/bundle.mjs: the entry lbdns.mjs and the chunks
# it imports, every dependency and the Corefile templates inside, what test/bundle.test.ts
# runs) on a Node 20 runtime. Nothing in it needs to write: pods run it with
# readOnlyRootFilesystem and mount the Corefile's directory.
FROM docker.io/library/node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY cmd cmd
COPY lib lib
COPY templates templates
COPY scripts scripts
RUN node scripts/bundle.mjs /out && chmod 0755 /out/lbdns.mjs

FROM docker.io/library/node:20-bookworm-slim
COPY --from=build /out/ /usr/local/lib/lbdns/
# `lbdns` on PATH for the pods' `command: [lbdns]`: the entry's #! line starts node, which
# follows the link to lbdns.mjs for the module type and for where ./chunks/ is.
RUN ln -s /usr/local/lib/lbdns/lbdns.mjs /usr/local/bin/lbdns
USER 65532:65532
ENTRYPOINT ["lbdns"]
