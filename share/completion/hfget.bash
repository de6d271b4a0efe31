# SPDX-License-Identifier: MIT
# bash completion for hfget: commands, flags, and the repo ids already in the HF cache. It asks the binary
# (`hfget __complete`), so it offers exactly what that build's --help knows. Installed as
# share/bash-completion/completions/hfget; to try it from a checkout: source share/completion/hfget.bash

_hfget() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local hfget=${COMP_WORDS[0]} command="" sub="" cache_dir="" i word
  COMPREPLY=()
  # The command and, under `cache`, its subcommand: the first words that are not flags (hfget's own flags take
  # no value), and the --cache-dir given, whose repos to offer.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ $word == --cache-dir ]]; then
      cache_dir=${COMP_WORDS[i + 1]}
    elif [[ $word != -* && -z $command ]]; then
      command=$word
    elif [[ $word != -* && $command == cache && -z $sub && ${COMP_WORDS[i - 1]} != -* ]]; then
      sub=$word
    fi
  done
  case $prev in
    --repo-type) mapfile -t COMPREPLY < <(compgen -W "model dataset space" -- "$cur"); return ;;
    --local-dir | --cache-dir | --output) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
  esac
  local words
  if [[ -z $command ]]; then
    if [[ $cur == -* ]]; then words=$("$hfget" __complete flags 2>/dev/null); else words=$("$hfget" __complete commands 2>/dev/null); fi
  elif [[ $cur == -* ]]; then
    words=$("$hfget" __complete flags "$command" ${sub:+"$sub"} 2>/dev/null)
  elif [[ $command == cache && -z $sub ]]; then
    words=$("$hfget" __complete commands cache 2>/dev/null)
  else
    case $command in
      download | verify | ls | status | wait | cache)
        words=$("$hfget" __complete repos ${cache_dir:+--cache-dir "$cache_dir"} 2>/dev/null) ;;
      *) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    esac
  fi
  mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -F _hfget hfget
