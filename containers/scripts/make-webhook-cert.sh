#!/usr/bin/env bash
# Makes a self-signed CA and a serving certificate for the gpuwise webhook, for clusters without
# cert-manager. Writes into OUT (default: the self-signed overlay next to this script's manifests):
#
#   ca.crt                 the CA certificate (what the API server trusts: the caBundle)
#   tls.crt, tls.key       the webhook's certificate (SAN: the Service's DNS names) and key
#   webhook-ca-bundle.yaml a JSON 6902 patch putting ca.crt into the MutatingWebhookConfiguration
#
# The CA key is used once and deleted: to rotate, run this again and re-apply the overlay
# (`kubectl apply -k containers/kubernetes/overlays/self-signed`); the webhook reloads the new
# certificate without a restart.
#
# usage: make-webhook-cert.sh [--out DIR] [--namespace NS] [--service NAME] [--days N]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/../kubernetes/overlays/self-signed"
namespace=gpuwise
service=gpuwise-webhook
days=365

while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --namespace) namespace="$2"; shift 2 ;;
    --service) service="$2"; shift 2 ;;
    --days) days="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "make-webhook-cert.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$days" =~ ^[0-9]+$ ]] || { echo "make-webhook-cert.sh: --days '$days' is not a number" >&2; exit 2; }
command -v openssl >/dev/null || { echo "make-webhook-cert.sh: openssl is not installed" >&2; exit 2; }
mkdir -p "$out"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
umask 077

# The CA: a P-256 key, CA:true, allowed to sign certificates only.
openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout "$work/ca.key" -out "$work/ca.crt" -days "$days" -sha256 \
  -subj "/CN=gpuwise-webhook-ca" \
  -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

# The serving certificate: the API server checks the name it dials, the Service's DNS name.
cat >"$work/server.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:${service},DNS:${service}.${namespace},DNS:${service}.${namespace}.svc,DNS:${service}.${namespace}.svc.cluster.local
EXT
openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout "$work/tls.key" -out "$work/tls.csr" -subj "/CN=${service}.${namespace}.svc" 2>/dev/null
openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
  -CAcreateserial -out "$work/tls.crt" -days "$days" -sha256 -extfile "$work/server.ext" 2>/dev/null
openssl verify -CAfile "$work/ca.crt" "$work/tls.crt" >/dev/null

# Replace the files whole (rename), so a webhook reading them never sees half of a pair.
install -m 0644 "$work/ca.crt" "$out/.ca.crt.new" && mv -f "$out/.ca.crt.new" "$out/ca.crt"
install -m 0644 "$work/tls.crt" "$out/.tls.crt.new" && mv -f "$out/.tls.crt.new" "$out/tls.crt"
install -m 0600 "$work/tls.key" "$out/.tls.key.new" && mv -f "$out/.tls.key.new" "$out/tls.key"
umask 022
cat >"$out/webhook-ca-bundle.yaml" <<YAML
# Written by containers/scripts/make-webhook-cert.sh: the CA the API server trusts for the webhook.
- op: add
  path: /webhooks/0/clientConfig/caBundle
  value: $(base64 -w0 <"$work/ca.crt")
YAML
echo "make-webhook-cert.sh: wrote ca.crt, tls.crt, tls.key and webhook-ca-bundle.yaml to $out" \
  "(valid $days days, for ${service}.${namespace}.svc)" >&2
