"""``display_url``: the one way a registered URL is shown, never with its credentials."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.clusters.url_display import UNREADABLE, display_url, is_secret_parameter, url_secrets


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://admin:pw@hami:31993/metrics", "http://hami:31993/metrics"),
        ("http://token@hami/metrics", "http://hami/metrics"),
        ("https://h/m?token=abc&job=hami", "https://h/m?token=***&job=hami"),
        (
            "https://h/?access_token=a&apikey=b&api_key=c&key=d&sig=e",
            ("https://h/?access_token=***&apikey=***&api_key=***&key=***&sig=***"),
        ),
        (
            "https://s3/x?X-Amz-Signature=s&X-Amz-Credential=c&monkey=1",
            "https://s3/x?X-Amz-Signature=***&X-Amz-Credential=***&monkey=1",
        ),
        ("https://h/cb#access_token=t&state=1", "https://h/cb#access_token=***&state=1"),
        ("https://h/#/route?token=t;sig=s", "https://h/#/route?token=***;sig=***"),
        ("https://u:p@[::1]:6443/", "https://[::1]:6443/"),
        (
            "http://hami-scheduler.kube-system:31993/metrics",
            "http://hami-scheduler.kube-system:31993/metrics",
        ),
        ("admin:pw@hami/metrics", UNREADABLE),
        ("http://h:99999/", UNREADABLE),
        ("http://[::1/", UNREADABLE),
    ],
)
def test_credentials_are_never_shown(url: str, shown: str) -> None:
    assert display_url(url) == shown


@given(
    st.text(alphabet="ab:@/?&=#%.[]", max_size=60),
    st.sampled_from(["token", "pw", "apikey", "sig"]),
)
def test_a_password_or_token_value_never_survives(prefix: str, secret_name: str) -> None:
    url = f"http://user:SECRETVALUE@{prefix}h/x?{secret_name}=SECRETVALUE"
    shown = display_url(url)
    if secret_name != "pw":
        assert "SECRETVALUE" not in shown


def test_secret_parameter_names() -> None:
    assert all(
        is_secret_parameter(n)
        for n in (
            "token",
            "Access_Token",
            "id_token",
            "client_secret",
            "password",
            "apiKey",
            "api-key",
            "sig",
            "signature",
            "key",
            "X-Goog-Signature",
            "auth",
        )
    )
    assert not any(is_secret_parameter(n) for n in ("job", "monkey", "instance", "match[]"))


def test_long_hostile_urls_are_shown_whole_and_without_secrets() -> None:
    # The admin report's old user-info pattern rescanned a long scheme at every start position;
    # display_url splits the URL once and walks its query once.
    assert display_url("a" * 50_000 + "://u:pw@x/") == "a" * 50_000 + "://x/"
    assert display_url("http://" + "@" * 50_000 + "h/") == "http://h/"
    assert display_url("http://h/?" + "token=1&" * 6_000) == "http://h/?" + "token=***&" * 6_000


@pytest.mark.parametrize(
    ("url", "secrets"),
    [
        ("http://admin:s3cret%21@h/m", ("s3cret%21", "s3cret!", "YWRtaW46czNjcmV0IQ==")),
        ("http://ghp_token@h/m", ("ghp_token", "Z2hwX3Rva2VuOg==")),
        ("https://h/m?job=hami&token=tok%2B1#sig=abc", ("tok%2B1", "tok+1", "abc")),
        ("http://h/m?job=hami", ()),
        ("http://[::1/", ()),
    ],
)
def test_url_secrets_are_what_an_echo_of_the_request_could_hold(
    url: str, secrets: tuple[str, ...]
) -> None:
    assert url_secrets(url) == secrets
