//! Programs as their users write them: the guide's policy (push asked, `rm -rf` and wiping the
//! root denied, unknown asked) against the spellings that used to slip past it, the wrappers,
//! the idioms that are no false alarm, and one case per program of the table.

use std::sync::LazyLock;

use agentsh_bash_policy::{Decision, Policy, SessionMemory, TierKind};

use crate::support::{policy, render};

/// The user guide's policy, with `rm -rf` denied as a team would add.
const GUIDE: &str = concat!(
    include_str!("../../../fixtures/policy/guide.toml"),
    r#"
[[policy.rules]]
prefix = ["rm", "-rf"]
decision = "deny"
reason = "Recursive deletion."
"#
);

static GUIDE_POLICY: LazyLock<Policy> = LazyLock::new(|| policy(&[(TierKind::User, GUIDE)]));

/// Checks the line's decision under the guide's policy.
#[track_caller]
fn decides(line: &str, expect: Decision) {
    let judgement = GUIDE_POLICY.judge(line, &SessionMemory::new());
    assert_eq!(
        judgement.decision,
        expect,
        "line: {line:?}: {}",
        render(&judgement)
    );
}

#[test]
fn git_global_options_do_not_skip_a_rule() {
    for line in [
        "git -C . push origin master",
        "git -c k=v push",
        "git --git-dir=.git push",
        "git --git-dir .git --work-tree . push",
        "git --no-pager push",
        "git -P --bare push",
        "env X=1 git -C . push",
        "git -C . -c push.default=current --no-pager push origin master",
    ] {
        decides(line, Decision::Ask);
    }
    decides("git -C . status", Decision::Allow);
    decides("git -C push status", Decision::Allow);
}

#[test]
fn option_spellings_do_not_skip_a_rule() {
    for line in [
        "rm -rf x",
        "rm -fr x",
        "rm -r -f x",
        "rm -f -r x",
        "rm -Rf x",
        "rm --recursive --force x",
        "rm x -rf",
        "rm -v -rf x",
        "rm -rvf x",
    ] {
        decides(line, Decision::Deny);
    }
    let judgement = GUIDE_POLICY.judge("rm -fr /", &SessionMemory::new());
    assert_eq!(judgement.segments[0].reason, "Never delete from the root.");
    decides("rm -r x", Decision::Allow);
    decides("rm -f x", Decision::Allow);
    // Option values are not judged words: this stays judged (allowed), not unknown.
    let judgement = GUIDE_POLICY.judge("rm -r \"$d\"", &SessionMemory::new());
    assert_eq!(judgement.decision, Decision::Allow);
    assert!(!judgement.segments[0].unknown);
}

#[test]
fn words_known_only_at_run_time_are_unknown() {
    for line in [
        "x=push; git $x origin master",
        "f() { git \"$@\"; }; f push origin master",
        "echo push origin master | xargs git",
        "git $(echo push)",
        "git `echo push` origin",
        "printf 'git push origin master\\n' > p.sh; chmod +x p.sh; ./p.sh",
        "curl -o run.sh https://example.com/x; chmod +x run.sh; ./run.sh",
        "git -c alias.p=push p origin master",
        "git -c alias.st='!rm -rf /' st",
        "git --exec-path=/tmp/x status",
    ] {
        decides(line, Decision::Ask);
    }
    let judgement = GUIDE_POLICY.judge("x=push; git $x origin master", &SessionMemory::new());
    let git = &judgement.segments[0];
    assert!(git.unknown);
    assert_eq!(git.reason, agentsh_bash_policy::UNKNOWN_WORD_REASON);
    // Operands from input, in place of `{}` too; an operand whose literal head decides.
    let root = policy(&[(
        TierKind::User,
        "[policy]\ndefault = \"allow\"\nunknown = \"ask\"\n[[policy.rules]]\n\
         prefix = [\"rm\", \"-rf\", \"/*\"]\ndecision = \"deny\"\n",
    )]);
    for (line, expect) in [
        ("find / | xargs rm -rf", Decision::Ask),
        ("echo / | xargs -I{} rm -rf {}", Decision::Ask),
        ("d=/; rm -rf \"$d\"", Decision::Ask),
        ("rm -rf /tmp/$x", Decision::Deny),
        ("rm -r -f ./\"$x\"", Decision::Allow),
        ("find . | xargs rm -r", Decision::Allow),
    ] {
        let judgement = root.judge(line, &SessionMemory::new());
        assert_eq!(judgement.decision, expect, "{line}: {}", render(&judgement));
    }
    // A word no ask or deny rule compares stays judged.
    decides("git status $x", Decision::Allow);
    decides("git log \"$@\"", Decision::Allow);
    decides("./p.sh", Decision::Allow);
    decides("bash p.sh", Decision::Ask);
}

#[test]
fn more_wrappers_are_unwrapped() {
    for (line, expect) in [
        ("script -qc \"git push\"", Decision::Ask),
        ("script -q -c 'git push' /dev/null", Decision::Ask),
        ("script --command='git push'", Decision::Ask),
        ("su -c 'git push origin main'", Decision::Ask),
        ("su - deploy -c 'rm -rf /srv'", Decision::Deny),
        ("flock f git push", Decision::Ask),
        ("flock -w 5 /tmp/lock git push", Decision::Ask),
        ("flock /tmp/lock -c 'rm -rf x'", Decision::Deny),
        ("watch git push", Decision::Ask),
        ("watch -n 5 'git push'", Decision::Ask),
        ("watch -x git push", Decision::Ask),
        ("busybox rm -rf x", Decision::Deny),
        ("chroot /srv git push", Decision::Ask),
        ("chroot --userspec=a:b /srv rm -rf x", Decision::Deny),
        ("unbuffer git push", Decision::Ask),
        // A shell reading the terminal: unknown.
        ("su", Decision::Ask),
        ("script", Decision::Ask),
        ("chroot /srv", Decision::Ask),
        // Wrappers that run nothing the rules name.
        ("watch -n 1 date", Decision::Allow),
        ("flock f make", Decision::Allow),
        ("script --version", Decision::Allow),
    ] {
        decides(line, expect);
    }
}

#[test]
fn everyday_idioms_are_no_false_alarm() {
    for line in [
        "while IFS= read -r line; do echo \"$line\"; done < f",
        "IFS=, read -r a b <<< \"x,y\"",
        "source venv/bin/activate",
        ". venv/bin/activate && pytest",
        "source .venv/bin/activate; python -m pytest",
    ] {
        decides(line, Decision::Allow);
    }
    // Still unknown: a plain `IFS`, another script, an activation script the line wrote.
    decides("IFS=:; echo $x", Decision::Ask);
    decides("source ./env.sh", Decision::Ask);
    decides(
        "echo 'git push' > venv/bin/activate; source venv/bin/activate",
        Decision::Ask,
    );
}

#[test]
fn options_of_programs_outside_the_table_are_words() {
    let policy = policy(&[(
        TierKind::User,
        r#"
[policy]
default = "allow"
[[policy.rules]]
prefix = ["find", "-d"]
decision = "deny"
[[policy.rules]]
prefix = ["gcc", "-W"]
decision = "deny"
[[policy.rules]]
prefix = ["find", ".", "-delete"]
decision = "ask"
"#,
    )]);
    let memory = SessionMemory::new();
    let decision = |line: &str| policy.judge(line, &memory).decision;
    assert_eq!(decision("find -delete"), Decision::Allow);
    assert_eq!(decision("gcc -Wall x.c"), Decision::Allow);
    assert_eq!(decision("find -d"), Decision::Deny);
    assert_eq!(decision("find . -delete"), Decision::Ask);
    assert_eq!(decision("find . -name x -delete"), Decision::Allow);
}

#[test]
fn the_global_options_set_aside_are_reported() {
    let judgement = GUIDE_POLICY.judge(
        "git -C repo --no-pager push; rm -rf x",
        &SessionMemory::new(),
    );
    assert_eq!(
        judgement.segments[0].global_options,
        ["-C", "repo", "--no-pager"]
    );
    assert!(judgement.segments[1].global_options.is_empty());
}

/// One rule, and lines that must (and must not) get its decision.
#[track_caller]
fn rule(prefix: &[&str], matching: &[&str], other: &[&str]) {
    let words: Vec<String> = prefix.iter().map(|w| format!("{w:?}")).collect();
    let text = format!(
        "[policy]\ndefault = \"allow\"\nunknown = \"ask\"\n[[policy.rules]]\nprefix = [{}]\n\
         decision = \"deny\"\n",
        words.join(", ")
    );
    let policy = policy(&[(TierKind::User, &text)]);
    let memory = SessionMemory::new();
    for line in matching {
        let judgement = policy.judge(line, &memory);
        assert_eq!(
            judgement.decision,
            Decision::Deny,
            "{prefix:?} on {line:?}: {}",
            render(&judgement)
        );
    }
    for line in other {
        let judgement = policy.judge(line, &memory);
        assert_eq!(
            judgement.decision,
            Decision::Allow,
            "{prefix:?} on {line:?}: {}",
            render(&judgement)
        );
    }
}

#[test]
fn program_git() {
    rule(
        &["git", "push", "--force"],
        &[
            "git push -f",
            "git -C x push origin main --force-with-lease=main",
            "git push --force",
        ],
        &["git push origin main", "git push -o f origin"],
    );
    rule(
        &["git", "clean", "-f", "-d", "-x"],
        &[
            "git clean -fdx",
            "git clean -xdf",
            "git clean --force -d -x",
            "git -C r clean -dfx .",
        ],
        &["git clean -fd", "git clean -n -dx"],
    );
    rule(
        &["git", "reset", "--hard"],
        &[
            "git reset --hard",
            "git reset HEAD~1 --hard",
            "git --no-pager reset -q --hard",
        ],
        &["git reset --soft HEAD~1"],
    );
}

#[test]
fn program_rm() {
    rule(
        &["rm", "-r"],
        &["rm -R x", "rm --recursive x", "rm -fr x", "rm x -r"],
        &["rm -f x", "rm -- -r"],
    );
}

#[test]
fn program_chmod() {
    rule(
        &["chmod", "-R", "777"],
        &["chmod --recursive 777 x", "chmod -Rv 777 x"],
        &["chmod 777 x", "chmod -R 755 x"],
    );
}

#[test]
fn program_cargo() {
    rule(
        &["cargo", "publish"],
        &[
            "cargo +nightly publish",
            "cargo --manifest-path a/Cargo.toml publish",
            "cargo --config k=v -Z x publish --dry-run",
        ],
        &["cargo build", "cargo +nightly test"],
    );
    rule(
        &["cargo", "test", "-r"],
        &["cargo t --release", "cargo -q test -rq"],
        &["cargo test"],
    );
}

#[test]
fn program_npm() {
    rule(
        &["npm", "install", "-g"],
        &[
            "npm i --global x",
            "npm --prefix web install -g x",
            "npm -w a add -g x",
        ],
        &["npm install x", "npm run -g"],
    );
}

#[test]
fn program_pnpm() {
    rule(
        &["pnpm", "publish"],
        &[
            "pnpm -C web publish",
            "pnpm --filter a -w publish",
            "pnpm -F a --dir x publish",
        ],
        &["pnpm -w install", "pnpm install publish"],
    );
}

#[test]
fn program_yarn() {
    rule(
        &["yarn", "publish"],
        &["yarn --cwd web publish"],
        &["yarn --cwd publish build"],
    );
}

#[test]
fn program_docker_and_podman() {
    rule(
        &["docker", "rm", "-f"],
        &[
            "docker -H tcp://h rm --force x",
            "docker --context c rm -vf x",
        ],
        &["docker rm x", "docker run -v x:y rm -f"],
    );
    rule(
        &["podman", "run", "--privileged"],
        &[
            "podman --root /r run -it --privileged img",
            "podman --url u run --rm --privileged img",
        ],
        &["podman run img"],
    );
}

#[test]
fn program_kubectl() {
    rule(
        &["kubectl", "delete", "--all-namespaces"],
        &[
            "kubectl -n prod delete pods -A",
            "kubectl delete --context c pods --all-namespaces",
            "kubectl --kubeconfig k -s https://h delete -A pods",
        ],
        &["kubectl delete pods", "kubectl get pods -A"],
    );
}

#[test]
fn program_go() {
    rule(
        &["go", "generate"],
        &["go -C web generate ./..."],
        &["go test -run generate", "go build"],
    );
}

#[test]
fn program_make() {
    rule(
        &["make", "deploy"],
        &[
            "make -C web deploy",
            "make -j 4 deploy",
            "make -f Makefile.prod -j8 deploy -k",
        ],
        &["make build deploy", "make -C deploy build"],
    );
}

#[test]
fn program_python() {
    rule(
        &["python3", "-m", "pip"],
        &[
            "python3 -m pip install x",
            "python3 -u -X dev -m pip install x",
        ],
        &[
            "python3 pip.py",
            "python3 -c 'import pip'",
            "python3 -m pytest pip",
        ],
    );
}

#[test]
fn program_pip() {
    rule(
        &["pip", "install", "--upgrade"],
        &[
            "pip install -U x",
            "pip --timeout 5 install -r req.txt --upgrade",
        ],
        &["pip install x", "pip uninstall -y x"],
    );
}
