#!/usr/bin/env bash
# A certificate authority of the stack's own, made with the JDK's keytool (no openssl needed), and the
# certificates its servers present. Everything lives in $RUN/tls, readable by its owner only.
#   tls.sh ca            make the CA once: ca.p12 (its key), ca.pem (the certificate clients trust)
#   tls.sh server NAME   make NAME.p12 once: a key and a certificate for localhost and 127.0.0.1,
#                        signed by the CA, with the CA's certificate in its chain (password in NAME.pass)
#   tls.sh show          the CA's subject, fingerprint and validity
# docs/security.md, "Encryption".
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TLS="$RUN/tls"
CA_DAYS=3650
SERVER_DAYS=397   # what public CAs may issue at most, so nothing learns to expect longer

ca() {
  private_dir "$TLS"
  [ -s "$TLS/ca.pem" ] && [ -s "$TLS/ca.p12" ] && return 0
  local pass; pass="$(secret "$TLS/ca.pass")"
  rm -f "$TLS/ca.p12" "$TLS/ca.pem"
  (umask 077
    keytool -genkeypair -alias ca -keyalg EC -groupname secp256r1 -sigalg SHA256withECDSA \
      -dname "CN=gpucloud local CA $(hostname -s 2>/dev/null || echo host) $(date -u +%Y%m%d%H%M%S)" \
      -ext bc:c=ca:true,pathlen:0 -ext ku:c=keyCertSign,cRLSign -validity "$CA_DAYS" \
      -keystore "$TLS/ca.p12" -storetype PKCS12 -storepass "$pass" 2>/dev/null
    keytool -exportcert -rfc -alias ca -keystore "$TLS/ca.p12" -storepass "$pass" -file "$TLS/ca.pem" 2>/dev/null)
  say "  made a local certificate authority: $TLS/ca.pem (clients trust it)"
}

server() {
  local name="${1:?usage: tls.sh server NAME}"
  [[ "$name" =~ ^[a-z][a-z0-9-]{0,30}$ ]] || die "server name must be lower-case letters, digits and '-', was '$name'"
  ca
  [ -s "$TLS/$name.p12" ] && return 0
  local capass pass; capass="$(cat "$TLS/ca.pass")"; pass="$(secret "$TLS/$name.pass")"
  (umask 077
    keytool -genkeypair -alias "$name" -keyalg EC -groupname secp256r1 -sigalg SHA256withECDSA \
      -dname "CN=localhost, OU=$name" -validity "$SERVER_DAYS" \
      -keystore "$TLS/$name.p12" -storetype PKCS12 -storepass "$pass" 2>/dev/null
    keytool -certreq -alias "$name" -keystore "$TLS/$name.p12" -storepass "$pass" -file "$TLS/$name.csr" 2>/dev/null
    keytool -gencert -alias ca -keystore "$TLS/ca.p12" -storepass "$capass" -infile "$TLS/$name.csr" \
      -outfile "$TLS/$name.crt" -rfc -validity "$SERVER_DAYS" -sigalg SHA256withECDSA \
      -ext san=dns:localhost,ip:127.0.0.1 -ext ku:c=digitalSignature -ext eku=serverAuth,clientAuth 2>/dev/null
    keytool -importcert -noprompt -alias ca -file "$TLS/ca.pem" -keystore "$TLS/$name.p12" -storepass "$pass" 2>/dev/null
    keytool -importcert -alias "$name" -file "$TLS/$name.crt" -keystore "$TLS/$name.p12" -storepass "$pass" 2>/dev/null)
  rm -f "$TLS/$name.csr"
}

show() {
  [ -s "$TLS/ca.pem" ] || die "no CA in $TLS yet: tls.sh ca"
  keytool -printcert -file "$TLS/ca.pem" | grep -E '^(Owner|Valid|\s*SHA256:)'
}

case "${1:-}" in
  ca) ca ;;
  server) shift; server "$@" ;;
  show) show ;;
  *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
