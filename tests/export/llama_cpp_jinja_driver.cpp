// Renders chat templates with llama.cpp's own Jinja engine (common/jinja in llama.cpp's
// source), for tests/export/test_jinja_llama_cpp.py.  Built by tests/support/llama_cpp_jinja.py
// against the sources of the pinned llama-cpp-python sdist; this file is pawlette's.
//
// stdin:  {"template": "...", "cases": [{"messages": [...], "tools": [...], ...}, ...]}
// stdout: one JSON object per case, in order: {"text": "..."} or {"error": "..."}
//
// Each case's variables are given the way llama.cpp's common_chat_template_direct_apply gives
// them: the case's keys, bos_token and eos_token (empty here), add_generation_prompt only when
// true, strings marked as input.

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "jinja/lexer.h"
#include "jinja/parser.h"
#include "jinja/runtime.h"
#include "json.h"

// json.cpp asserts through ggml; the rest of ggml is not linked.
extern "C" void ggml_abort(const char * file, int line, const char * fmt, ...) {
    std::fprintf(stderr, "ggml_abort at %s:%d (%s)\n", file, line, fmt);
    std::abort();
}

using ordered = nlohmann::ordered_json;

static void emit(const char * key, const std::string & value) {
    ordered line = ordered::object();
    line[key] = value;
    // Invalid UTF-8 (a byte-wise slice gone wrong) is shown, not thrown.
    std::cout << line.dump(-1, ' ', false, ordered::error_handler_t::replace) << "\n";
}

int main() {
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    ordered request = ordered::parse(input);
    const std::string source = request.at("template").get<std::string>();
    const ordered & cases = request.at("cases");

    jinja::program program;
    try {
        jinja::lexer lexer;
        program = jinja::parse_from_tokens(lexer.tokenize(source));
    } catch (const std::exception & error) {
        for (size_t i = 0; i < cases.size(); i++) {
            emit("error", std::string("template does not load: ") + error.what());
        }
        return 0;
    }

    for (const auto & item : cases) {
        try {
            ordered variables = ordered::object();
            for (const auto & [key, value] : item.items()) {
                if (key == "add_generation_prompt" && !value.get<bool>()) {
                    continue;
                }
                if (key == "tools" && value.is_null()) {
                    continue;
                }
                variables[key] = value;
            }
            variables["bos_token"] = "";
            variables["eos_token"] = "";
            jinja::context context(source);
            jinja::global_from_json(context, common_json::parse(variables.dump()), true);
            jinja::runtime runtime(context);
            auto parts = jinja::runtime::gather_string_parts(runtime.execute(program));
            emit("text", parts->as_string().str());
        } catch (const std::exception & error) {
            emit("error", error.what());
        }
    }
    return 0;
}
