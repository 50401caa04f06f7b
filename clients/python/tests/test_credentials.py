"""The token is found where `gpucloud login` put it, GPUCLOUD_TOKEN first, and refreshed as the CLI does."""
import base64
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from gpucloud import credentials


def jwt(exp):
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")
    return part({"alg": "RS256"}) + "." + part({"sub": "alice", "exp": exp}) + ".sig"


def store(home, profile, token):
    folder = home / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / (profile + ".token")).write_text(token + "\n")


def test_the_default_profile_under_gpucloud_home(no_login):
    store(no_login, "default", "tok-default")
    assert credentials.token() == "tok-default"


def test_gpucloud_profile_then_the_argument(no_login, monkeypatch):
    store(no_login, "acme", "tok-acme")
    store(no_login, "ops", "tok-ops")
    monkeypatch.setenv("GPUCLOUD_PROFILE", "acme")
    assert credentials.token() == "tok-acme"
    assert credentials.token("ops") == "tok-ops"


def test_gpucloud_token_wins_over_the_file(no_login, monkeypatch):
    store(no_login, "default", "tok-file")
    monkeypatch.setenv("GPUCLOUD_TOKEN", "  tok-env \n")
    assert credentials.token() == "tok-env"
    assert credentials.describe_source() == "GPUCLOUD_TOKEN"


def test_home_defaults_to_dot_gpucloud(no_login, monkeypatch, tmp_path):
    monkeypatch.delenv("GPUCLOUD_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert credentials.token_file() == str(tmp_path / ".gpucloud" / "profiles" / "default.token")


def test_no_login_is_no_token(no_login):
    assert credentials.token() is None
    store(no_login, "default", "  ")
    assert credentials.token() is None


@pytest.mark.parametrize("bad", ["", "../etc", "a/b", "-x", "x" * 64, 7])
def test_a_bad_profile_name(no_login, bad):
    with pytest.raises(ValueError, match="profile must be 1..63 letters, digits, dots, dashes or underscores"):
        credentials.token(bad)


def test_an_unreadable_token_file_says_which(no_login):
    (no_login / "profiles" / "default.token").mkdir(parents=True)
    with pytest.raises(Exception, match="cannot read the token file .*default.token"):
        credentials.token()


class TokenEndpoint(BaseHTTPRequestHandler):
    answers = []
    forms = []

    def do_POST(self):
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        TokenEndpoint.forms.append(form)
        status, body = TokenEndpoint.answers.pop(0)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(body).encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    server = HTTPServer(("127.0.0.1", 0), TokenEndpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    TokenEndpoint.answers, TokenEndpoint.forms = [], []
    yield "http://127.0.0.1:%d/token" % server.server_port
    server.shutdown()
    server.server_close()


def test_an_expired_token_is_refreshed_and_both_files_rewritten_owner_only(no_login, endpoint):
    store(no_login, "default", jwt(int(time.time()) - 10))
    (no_login / "profiles" / "default.refresh.json").write_text(json.dumps(
        {"issuer": "https://idp", "client_id": "gpucloud-cli", "token_endpoint": endpoint, "refresh_token": "r1"}))
    fresh = jwt(int(time.time()) + 3600)
    TokenEndpoint.answers.append((200, {"access_token": fresh, "refresh_token": "r2"}))
    assert credentials.token() == fresh
    assert TokenEndpoint.forms[0] == {"grant_type": ["refresh_token"], "refresh_token": ["r1"],
                                      "client_id": ["gpucloud-cli"]}
    assert (no_login / "profiles" / "default.token").read_text().strip() == fresh
    assert json.loads((no_login / "profiles" / "default.refresh.json").read_text())["refresh_token"] == "r2"
    assert os.stat(no_login / "profiles" / "default.token").st_mode & 0o777 == 0o600


def test_a_refused_refresh_warns_and_sends_the_old_token(no_login, endpoint):
    old = jwt(int(time.time()) - 10)
    store(no_login, "default", old)
    (no_login / "profiles" / "default.refresh.json").write_text(json.dumps(
        {"issuer": "https://idp", "client_id": "c", "token_endpoint": endpoint, "refresh_token": "r1"}))
    TokenEndpoint.answers.append((400, {"error": "invalid_grant"}))
    warnings = []
    assert credentials.token(warn=warnings.append) == old
    assert "refused the refresh token (HTTP 400)" in warnings[0]
    assert "log in again: gpucloud login --issuer https://idp" in warnings[0]


def test_a_token_that_is_still_good_is_not_refreshed(no_login, endpoint):
    good = jwt(int(time.time()) + 3600)
    store(no_login, "default", good)
    (no_login / "profiles" / "default.refresh.json").write_text(json.dumps(
        {"issuer": "i", "client_id": "c", "token_endpoint": endpoint, "refresh_token": "r1"}))
    assert credentials.token() == good
    assert TokenEndpoint.forms == []
