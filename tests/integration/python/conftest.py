import pytest

from support import Daemon, restore_stack, unique, write_config
from toxiproxy import Toxiproxy


@pytest.fixture(scope="session", autouse=True)
def whole_stack():
    """Every test file (one pytest session each) starts on a whole stack. Files that stop or kill
    stack components run alone (RUN_SERIAL), and the others stop none, so nothing stopped here is
    stopped on purpose by a file still running."""
    restore_stack()


@pytest.fixture
def daemon_factory(tmp_path):
    """Starts daemons for a test and stops (or kills) whatever is left at its end."""
    started = []

    def make(topic, table, group=None, name="daemon", **overrides):
        config_path = tmp_path / f"{name}.yaml"
        config = write_config(config_path, topic, table, group=group, **overrides)
        daemon = Daemon(config_path, config, tmp_path / f"{name}.log")
        started.append(daemon)
        return daemon

    yield make
    for daemon in started:
        daemon.kill()


@pytest.fixture
def names():
    topic = unique("t")
    return {"topic": topic, "table": unique("tbl"), "dlq": topic + "_dlq"}


@pytest.fixture
def proxies(tmp_path):
    """A Toxiproxy server of the test's own (fault tests put it between the daemon and Kafka or the
    gateway); stopped at the end of the test."""
    server = Toxiproxy(tmp_path / "toxiproxy.log")
    yield server
    server.close()
