"""Reserved words of each language: said by every file, they tell nothing about what a passage does.

Only a keyword standing alone is dropped (``delete obj``, ``def refresh``); the same word inside an identifier
(``has_delete_permission``) or in a query is kept.
"""

from __future__ import annotations

_C = """auto break case char const continue default do double else enum extern float for goto if inline int long
register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while null
include define ifdef ifndef endif pragma"""
_JS = """break case catch class const continue debugger default delete do else export extends finally for function if
import in instanceof let new return super switch this throw try typeof var void while with yield async await of null
undefined true false static"""
_TS = (
    _JS
    + """ interface type enum implements namespace declare readonly private public protected abstract as any
unknown never keyof infer is number string boolean"""
)

KEYWORDS: dict[str, frozenset[str]] = {
    name: frozenset(words.split())
    for name, words in {
        "python": """false none true and as assert async await break class continue def del elif else except finally
            for from global if import in is lambda nonlocal not or pass raise return try while with yield self cls""",
        "javascript": _JS,
        "typescript": _TS,
        "tsx": _TS,
        "go": """break case chan const continue default defer else fallthrough for func go goto if import interface map
            package range return select struct switch type var nil true false iota string int error bool""",
        "rust": """as break const continue crate else enum extern false fn for if impl in let loop match mod move
            mut pub ref return self static struct super trait true type unsafe use where while async await dyn""",
        "java": """abstract assert boolean break byte case catch char class const continue default do double else enum
            extends final finally float for goto if implements import instanceof int interface long native new package
            private protected public return short static strictfp super switch synchronized this throw throws
            transient try void volatile while null true false var record string""",
        "c": _C,
        "cpp": _C
        + """ class namespace template typename public private protected virtual override new delete this
            using operator friend explicit mutable constexpr nullptr noexcept decltype try catch throw bool true false
            std""",
        "csharp": """abstract as base bool break byte case catch char checked class const continue decimal default
            delegate do double else enum event explicit extern false finally fixed float for foreach goto if implicit
            in int interface internal is lock long namespace new null object operator out override params private
            protected public readonly ref return sbyte sealed short sizeof static string struct switch this throw true
            try typeof uint ulong unchecked unsafe ushort using virtual void volatile while var async await""",
        "ruby": """alias and begin break case class def defined do else elsif end ensure false for if in module next
            nil not or redo rescue retry return self super then true undef unless until when while yield require""",
        "php": """abstract and array as break callable case catch class clone const continue declare default do echo
            else elseif empty enddeclare endfor endforeach endif endswitch endwhile extends final finally fn for foreach
            function global goto if implements include instanceof insteadof interface isset list match namespace new or
            print private protected public readonly require return static switch throw trait try unset use var while
            xor yield this null true false self""",
        "kotlin": """as break class continue do else false for fun if in interface is null object package return super
            this throw true try typealias typeof val var when while by companion data inline lateinit open override
            private protected public sealed suspend internal import""",
        "swift": """associatedtype class deinit enum extension fileprivate func import init inout internal let open
            operator private protocol public rethrows static struct subscript typealias var break case continue
            default defer do else fallthrough for guard if in repeat return switch where while as catch false is nil
            self super throw throws true try""",
        "scala": """abstract case catch class def do else extends false final finally for forsome if implicit import
            lazy match new null object override package private protected return sealed super this throw trait try
            true type val var while with yield""",
        "lua": """and break do else elseif end false for function goto if in local nil not or repeat return then true
            until while self""",
        "bash": """if then else elif fi case esac for select while until do done in function time local export
            declare readonly echo return set unset shift exit""",
    }.items()
}


def keywords_for(language: str) -> frozenset[str]:
    return KEYWORDS.get(language, frozenset())


__all__ = ["KEYWORDS", "keywords_for"]
