// Runs llama.cpp's GBNF grammar engine (src/llama-grammar.cpp, built from the llama-cpp-python
// sdist by tests/export/test_gbnf_llama_cpp.py) on text, without a model or a vocabulary.
//
// Input on stdin, each field as its byte length in decimal, a newline, then the bytes:
//   the grammar, then any number of cases (the text a model would write).
// Output on stdout, one line per case: ACCEPT when llama.cpp's engine takes the whole text
// code point by code point (llama_grammar_accept_str, the path of text generation) and a
// stack is then complete; REJECT otherwise.  A grammar llama.cpp cannot parse prints
// PARSE_FAILED (and the parser's log on stderr) and nothing else.
//
// llama-grammar.cpp also refers to a vocabulary (token references `<...>` and the sampler's
// token paths), which text-only grammars never reach; the definitions below stand in for
// libllama's so that only the grammar engine is compiled.

#include "llama-grammar.h"
#include "llama-impl.h"
#include "llama-vocab.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

void llama_log_internal(ggml_log_level level, const char * format, ...) {
    if (level == GGML_LOG_LEVEL_DEBUG) {
        return;
    }
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
}

extern "C" void ggml_abort(const char * file, int line, const char * format, ...) {
    fprintf(stderr, "%s:%d: ", file, line);
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, "\n");
    std::abort();
}

// Reached only through token references or the sampler, never for text: fail loudly.
bool llama_vocab::is_eog(llama_token) const {
    throw std::logic_error("the grammar driver has no vocabulary (is_eog)");
}

const std::string & llama_vocab::token_to_piece(llama_token) const {
    throw std::logic_error("the grammar driver has no vocabulary (token_to_piece)");
}

int32_t llama_vocab::tokenize(const char *, int32_t, llama_token *, int32_t, bool, bool) const {
    throw std::logic_error("the grammar driver has no vocabulary (tokenize)");
}

static bool read_field(std::string & out) {
    std::string length;
    if (!std::getline(std::cin, length) || length.empty()) {
        return false;
    }
    out.assign(std::stoul(length), '\0');
    std::cin.read(out.data(), static_cast<std::streamsize>(out.size()));
    return static_cast<size_t>(std::cin.gcount()) == out.size();
}

int main() {
    std::ios::sync_with_stdio(false);
    std::string grammar_text;
    if (!read_field(grammar_text)) {
        fprintf(stderr, "expected a grammar on stdin\n");
        return 2;
    }
    llama_grammar * grammar =
        llama_grammar_init_impl(nullptr, grammar_text.c_str(), "root", false, nullptr, 0, nullptr, 0);
    if (grammar == nullptr) {
        std::cout << "PARSE_FAILED\n";
        return 0;
    }
    const llama_grammar_stacks initial = llama_grammar_get_stacks(grammar);
    std::string text;
    while (read_field(text)) {
        llama_grammar_get_stacks(grammar) = initial;
        grammar->partial_utf8 = {0, 0};
        bool accepted = true;
        try {
            llama_grammar_accept_str(*grammar, text);  // throws when no stack survives
        } catch (const std::runtime_error &) {
            accepted = false;
        }
        if (accepted) {
            accepted = false;
            for (const auto & stack : llama_grammar_get_stacks(grammar)) {
                accepted = accepted || stack.empty();
            }
        }
        std::cout << (accepted ? "ACCEPT" : "REJECT") << "\n";
    }
    llama_grammar_free_impl(grammar);
    return 0;
}
