"""``psych new``: the files it writes, when it refuses, and that the result runs."""

import pytest

from psych_runtime.cli.main import main

TEMPLATE_FILES = {"main.py", "README.md", ".gitignore", "pyproject.toml", "tests"}


def test_new_writes_a_project(tmp_path, capsys):
    target = tmp_path / "shop-assistant"

    assert main(["new", str(target)]) == 0

    assert {p.name for p in target.iterdir()} == TEMPLATE_FILES
    out = capsys.readouterr().out
    assert "python main.py" in out
    assert f"cd {target}" in out


def test_the_readme_explains_running_and_swapping_in_a_real_model(tmp_path):
    target = tmp_path / "shop-assistant"
    main(["new", str(target)])

    readme = (target / "README.md").read_text()

    assert readme.startswith("# shop-assistant\n")
    assert "{{" not in readme
    assert "python main.py" in readme
    assert "OpenAICompatibleClient" in readme
    assert "FakeModel" in readme


def test_the_generated_main_is_valid_python_that_needs_no_key(tmp_path):
    target = tmp_path / "demo"
    main(["new", str(target)])
    source = (target / "main.py").read_text()

    compile(source, "main.py", "exec")
    for name in ("check_stock", "AgentSpec", "FakeModel", "session(", "report("):
        assert name in source
    assert "API_KEY" not in source


def test_the_gitignore_is_written_with_its_dot(tmp_path):
    target = tmp_path / "demo"
    main(["new", str(target)])

    assert "__pycache__/" in (target / ".gitignore").read_text().splitlines()
    assert not (target / "gitignore").exists()


def test_an_existing_empty_directory_is_fine(tmp_path):
    target = tmp_path / "demo"
    target.mkdir()

    assert main(["new", str(target)]) == 0
    assert {p.name for p in target.iterdir()} == TEMPLATE_FILES


def test_a_non_empty_directory_is_refused_without_force(tmp_path, capsys):
    target = tmp_path / "demo"
    target.mkdir()
    (target / "main.py").write_text("mine\n")

    assert main(["new", str(target)]) == 1

    assert "--force" in capsys.readouterr().err
    assert (target / "main.py").read_text() == "mine\n"
    assert {p.name for p in target.iterdir()} == {"main.py"}


def test_force_overwrites_template_files_and_keeps_the_rest(tmp_path):
    target = tmp_path / "demo"
    target.mkdir()
    (target / "main.py").write_text("mine\n")
    (target / "notes.txt").write_text("keep me\n")

    assert main(["new", str(target), "--force"]) == 0

    assert (target / "main.py").read_text() != "mine\n"
    assert (target / "notes.txt").read_text() == "keep me\n"
    assert {p.name for p in target.iterdir()} == TEMPLATE_FILES | {"notes.txt"}


def test_a_file_in_the_way_is_refused_even_with_force(tmp_path, capsys):
    target = tmp_path / "demo"
    target.write_text("not a directory\n")

    assert main(["new", str(target), "--force"]) == 1

    assert "not a directory" in capsys.readouterr().err
    assert target.read_text() == "not a directory\n"


def test_an_unknown_template_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as caught:
        main(["new", str(tmp_path / "demo"), "--template", "nope"])

    assert caught.value.code == 2
    err = capsys.readouterr().err
    for name in ("'minimal'", "'tour'", "'fastapi'"):
        assert name in err
    assert not (tmp_path / "demo").exists()


def test_the_old_default_name_still_gives_the_minimal_template(tmp_path, capsys):
    target = tmp_path / "demo"

    assert main(["new", str(target), "--template", "default"]) == 0

    assert {p.name for p in target.iterdir()} == TEMPLATE_FILES
    assert "from the 'minimal' template" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("template", "files"),
    [
        ("tour", {"main.py", "README.md", ".gitignore", "pyproject.toml", "tests"}),
        (
            "fastapi",
            {
                "agent.py",
                "app.py",
                "worker.py",
                "README.md",
                ".gitignore",
                "pyproject.toml",
                "tests",
            },
        ),
    ],
)
def test_the_other_templates_write_their_files_with_the_name_filled_in(tmp_path, template, files):
    target = tmp_path / "weather-desk"

    assert main(["new", str(target), "--template", template]) == 0

    assert {p.name for p in target.iterdir()} == files
    for path in target.rglob("*"):
        if path.is_file():
            assert "{{" not in path.read_text(), path
    assert (target / "README.md").read_text().startswith("# weather-desk\n")


def test_the_help_describes_every_template_it_offers(capsys):
    with pytest.raises(SystemExit):
        main(["new", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    offered = text.split("--template {", 1)[1].split("}", 1)[0].split(",")
    assert set(offered) == {"minimal", "tour", "fastapi", "default"}
    for name in offered:
        assert f"`{name}`" in text, name
