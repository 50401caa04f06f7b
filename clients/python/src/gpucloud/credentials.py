"""The token `gpucloud login` stored, found the way the CLI finds it (cli Credentials and Identity).

GPUCLOUD_TOKEN, when set, is the token. Otherwise it is the file ``$GPUCLOUD_HOME/profiles/NAME.token``
(default home ``~/.gpucloud``; profile from the argument, else GPUCLOUD_PROFILE, else ``default``). A stored
token that has expired, or expires within 30 s, is refreshed first where a device-flow login left
``NAME.refresh.json`` beside it, and both files are rewritten owner-only, as the CLI does.
"""
import base64
import json
import os
import re
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request

from .errors import GpucloudError

PROFILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")
REFRESH_BEFORE_SECONDS = 30
REQUEST_TIMEOUT_SECONDS = 10


def home():
    """$GPUCLOUD_HOME, else ~/.gpucloud."""
    configured = os.environ.get("GPUCLOUD_HOME", "")
    return configured if configured.strip() else os.path.join(os.path.expanduser("~"), ".gpucloud")


def profile_name(profile=None):
    """The profile to use: the argument, else GPUCLOUD_PROFILE, else "default"; checked as the CLI checks it."""
    name = profile if profile is not None else (os.environ.get("GPUCLOUD_PROFILE") or "default")
    if not isinstance(name, str) or not PROFILE.match(name):
        raise ValueError("profile must be 1..63 letters, digits, dots, dashes or underscores, was %r" % (name,))
    return name


def token_file(profile=None):
    return os.path.join(home(), "profiles", profile_name(profile) + ".token")


def refresh_file(profile=None):
    return os.path.join(home(), "profiles", profile_name(profile) + ".refresh.json")


def describe_source(profile=None):
    """Where the token comes from, for messages: "GPUCLOUD_TOKEN" or the profile's file."""
    if os.environ.get("GPUCLOUD_TOKEN", "").strip():
        return "GPUCLOUD_TOKEN"
    return "profile '%s' (%s)" % (profile_name(profile), token_file(profile))


def token(profile=None, ca_file=None, warn=None):
    """The bearer token to send, or None when there is none (the scheduler then says to log in)."""
    from_env = os.environ.get("GPUCLOUD_TOKEN", "")
    if from_env.strip():
        return from_env.strip()
    path = token_file(profile)
    try:
        with open(path, encoding="utf-8") as f:
            stored = f.read().strip()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise GpucloudError("cannot read the token file %s (%s)" % (path, e.strerror or e)) from None
    if not stored:
        return None
    exp = expiry(stored)
    if exp is None or exp > time.time() + REFRESH_BEFORE_SECONDS:
        return stored
    refresh = _read_refresh(profile)
    if refresh is None:
        return stored
    try:
        access, refresh_token = _refresh(refresh, ca_file)
    except GpucloudError as e:
        if warn is not None:
            warn("the stored token of profile %s has expired and refreshing it failed (%s); log in again:"
                 " gpucloud login --issuer %s" % (profile_name(profile), e, refresh.get("issuer")))
        return stored
    refresh["refresh_token"] = refresh_token
    _write_private(path, access + "\n")
    _write_private(refresh_file(profile), json.dumps(refresh, indent=2) + "\n")
    return access


def expiry(jwt):
    """The JWT's exp (seconds since the epoch), read without verifying it; None where it names none."""
    parts = jwt.split(".")
    if len(parts) < 2:
        return None
    try:
        payload = parts[1] + "=" * (-len(parts[1]) % 4)
        exp = json.loads(base64.urlsafe_b64decode(payload)).get("exp")
    except (ValueError, AttributeError):
        return None
    return exp if isinstance(exp, (int, float)) and not isinstance(exp, bool) else None


def _read_refresh(profile):
    try:
        with open(refresh_file(profile), encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or not all(isinstance(stored.get(k), str) and stored.get(k)
                                               for k in ("token_endpoint", "client_id", "refresh_token")):
        return None
    return stored


def _refresh(stored, ca_file):
    """(access token, refresh token) from the provider's token endpoint (RFC 6749, section 6)."""
    endpoint = stored["token_endpoint"]
    body = urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": stored["refresh_token"],
                                   "client_id": stored["client_id"]}).encode()
    request = urllib.request.Request(endpoint, data=body, method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded",
                                              "Accept": "application/json"})
    context = None
    if endpoint.startswith("https:"):
        context = ssl.create_default_context()
        if ca_file:
            context.load_verify_locations(cafile=ca_file)
    what = "the token endpoint " + endpoint
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_SECONDS, context=context) as response:
            answer = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        raise GpucloudError("%s refused the refresh token (HTTP %d)" % (what, e.code)) from None
    except (urllib.error.URLError, OSError) as e:
        raise GpucloudError("cannot reach %s (%s)" % (what, getattr(e, "reason", e))) from None
    except ValueError:
        raise GpucloudError("%s answered something that is not JSON" % what) from None
    access = answer.get("access_token") if isinstance(answer, dict) else None
    if not isinstance(access, str) or not access:
        raise GpucloudError("%s answered without an access_token" % what)
    return access, answer.get("refresh_token") or stored["refresh_token"]


def _write_private(path, content):
    """Owner-only file beside the target, then an atomic rename over it."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = path + ".new"
    if os.path.exists(partial):
        os.remove(partial)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(content)
    os.replace(partial, path)
