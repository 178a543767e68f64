"""Bot settings from the environment: defaults, clear errors, secrets never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load_config


def test_defaults_with_an_empty_environment() -> None:
    config = load_config({})
    assert config.slack_bot_token is None
    assert config.slack_api_url == "https://slack.com/api/"
    assert config.port == 3000
    assert config.thread_ttl_seconds == 24 * 3600


def test_values_are_read_and_the_api_url_gets_its_slash(tmp_path: Path) -> None:
    registry = tmp_path / "clusters.yaml"
    registry.write_text("clusters: []\n")
    config = load_config(
        {
            "SLACK_BOT_TOKEN": "xoxb-1-2-abc",
            "SLACK_SIGNING_SECRET": "s3cr3t",
            "SLACK_API_URL": "https://slack-gov.com/api",
            "PORT": "8081",
            "HAMI_CLUSTERS_FILE": str(registry),
            "KUBECONFIG_DIR": str(tmp_path),
            "HAMI_SUMMARY_MAX_FILE_BYTES": "2048",
        }
    )
    assert config.slack_api_url == "https://slack-gov.com/api/"
    assert config.port == 8081
    assert config.clusters_file == registry
    assert config.max_file_bytes == 2048
    assert config.slack_bot_token is not None and config.slack_bot_token.reveal() == "xoxb-1-2-abc"


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"PORT": "web"}, ["PORT='web'", "not a whole number"]),
        ({"PORT": "70000"}, ["PORT='70000'", "at most 65535"]),
        ({"SLACK_API_URL": "slack.com/api"}, ["SLACK_API_URL", "http(s) URL"]),
        ({"SLACK_BOT_TOKEN": "xoxp-user-token"}, ["SLACK_BOT_TOKEN", "xoxb-"]),
        ({"SLACK_APP_TOKEN": "xoxb-wrong"}, ["SLACK_APP_TOKEN", "xapp-"]),
        ({"HAMI_CLUSTERS_FILE": "/nonexistent/clusters.yaml"}, ["no such file"]),
        ({"REDIS_URL": "http://localhost"}, ["REDIS_URL", "redis://"]),
        ({"HAMI_SUMMARY_THREAD_TTL_SECONDS": "0"}, ["at least 1"]),
        # The scrape timeout is bounded: a scrape holds its cluster's lock while it runs.
        (
            {"HAMI_SUMMARY_SCRAPE_TIMEOUT_SECONDS": "3600"},
            ["HAMI_SUMMARY_SCRAPE_TIMEOUT_SECONDS='3600'", "too large", "at most 300"],
        ),
        (
            {"HAMI_SUMMARY_SCRAPE_TIMEOUT_SECONDS": "inf"},
            ["HAMI_SUMMARY_SCRAPE_TIMEOUT_SECONDS='inf'", "not a finite number", "e.g. 10"],
        ),
        ({"HAMI_SUMMARY_SCRAPE_TIMEOUT_SECONDS": "nan"}, ["not a finite number"]),
        (
            {"HAMI_SUMMARY_ADMINS": "U0123ABCD,@alice"},
            ["HAMI_SUMMARY_ADMINS", "'@alice' is not a Slack user id", "Copy member ID"],
        ),
        ({"KUBECONFIG_DIR": "/nonexistent/kube"}, ["KUBECONFIG_DIR", "no such directory"]),
        # Redis, the web server and the Socket Mode side port are read here too.
        ({"REDIS_TIMEOUT_MS": "fast"}, ["REDIS_TIMEOUT_MS must be a positive number, got 'fast'"]),
        ({"REDIS_RETRY_INTERVAL_S": "nan"}, ["REDIS_RETRY_INTERVAL_S", "positive"]),
        ({"REDIS_KEY_PREFIX": ":"}, ["REDIS_KEY_PREFIX"]),
        (
            {"HAMI_SUMMARY_HTTP_THREADS": "0"},
            ["HAMI_SUMMARY_HTTP_THREADS='0' must be a whole number from 1 to 256 (default 8)"],
        ),
        ({"OPS_PORT": "side"}, ["OPS_PORT='side' is not a port number"]),
    ],
)
def test_bad_values_name_the_variable_and_the_fix(env: dict[str, str], words: list[str]) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(env)
    for word in words:
        assert word in error.value.message


def test_redis_and_web_server_settings_are_typed_once() -> None:
    config = load_config(
        {
            "REDIS_URL": "redis://:pw@redis:6379/0",
            "REDIS_KEY_PREFIX": "team-gpu:",
            "REDIS_TIMEOUT_MS": "250",
            "HAMI_SUMMARY_HTTP_MAX_BODY_BYTES": "2048",
            "OPS_PORT": "0",
        }
    )
    assert config.redis.url is not None and config.redis.url.reveal() == "redis://:pw@redis:6379/0"
    assert config.redis.key_prefix == "team-gpu"  # the store adds the ":" itself
    assert config.redis.timeout_seconds == 0.25 and config.redis.retry_interval_seconds == 5.0
    assert config.http.max_body_bytes == 2048 and config.http.threads == 8
    assert config.ops_port == 0
    assert [secret.reveal() for secret in config.secrets()] == ["redis://:pw@redis:6379/0"]
    defaults = load_config({})
    assert defaults.redis.url is None and defaults.redis.key_prefix == "hami-summary"
    assert defaults.ops_port == 8080 and defaults.secrets() == ()


def test_secrets_never_show_in_repr_or_errors() -> None:
    config = load_config(
        {
            "SLACK_BOT_TOKEN": "xoxb-super-secret-value",
            "SLACK_SIGNING_SECRET": "signing-secret-value",
            "REDIS_URL": "redis://:hunter2@redis:6379/0",
        }
    )
    shown = repr(config) + str(config.redacted())
    for secret in ("super-secret-value", "signing-secret-value", "hunter2"):
        assert secret not in shown
    with pytest.raises(ConfigError) as error:
        load_config({"SLACK_BOT_TOKEN": "xoxp-leaky-user-token"})
    assert "leaky" not in error.value.message


def test_admins_are_a_comma_separated_list_of_slack_user_ids() -> None:
    assert load_config({}).admins == frozenset()
    config = load_config({"HAMI_SUMMARY_ADMINS": " U0123ABCD, W0456EFGH ,,"})
    assert config.admins == frozenset({"U0123ABCD", "W0456EFGH"})
