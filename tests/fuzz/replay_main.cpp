// Stand-in for libFuzzer's main() in builds without it: runs the target
// once on every file named on the command line or found (recursively, in
// name order) in a directory named there, so the seed corpora and the
// inputs of past crashes are regression tests in every build.
//
//   replay_fuzz_channelframe tests/fuzz/corpus/fuzz_channelframe [more files or dirs]
//
// Exits non-zero when a path does not exist or nothing ran; a target that
// finds a broken invariant aborts.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
// Optional in a target, as with libFuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

namespace {

namespace fs = std::filesystem;

bool readFile(const fs::path &path, std::vector<uint8_t> &out)
{
    std::error_code error;
    const auto size = fs::file_size(path, error);
    if (error)
        return false;
    out.resize(size);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return false;
    in.read(reinterpret_cast<char *>(out.data()), static_cast<std::streamsize>(size));
    return static_cast<uintmax_t>(in.gcount()) == size;
}

bool collect(const fs::path &path, std::vector<fs::path> &files)
{
    std::error_code error;
    if (fs::is_regular_file(path, error)) {
        files.push_back(path);
        return true;
    }
    if (!fs::is_directory(path, error))
        return false;
    std::vector<fs::path> found;
    for (const auto &entry : fs::recursive_directory_iterator(path, error)) {
        if (entry.is_regular_file())
            found.push_back(entry.path());
    }
    if (error)
        return false;
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);

    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <corpus dir or input file>...\n", argv[0]);
        return 2;
    }
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        if (!collect(argv[i], files)) {
            std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
            return 2;
        }
    }

    size_t ran = 0;
    std::vector<uint8_t> input;
    for (const fs::path &file : files) {
        if (!readFile(file, input)) {
            std::fprintf(stderr, "%s: cannot read %s\n", argv[0], file.c_str());
            return 2;
        }
        // Like libFuzzer, never hand the target a null pointer.
        static const uint8_t empty = 0;
        LLVMFuzzerTestOneInput(input.empty() ? &empty : input.data(), input.size());
        ++ran;
    }
    std::printf("%s: %zu inputs ran\n", argv[0], ran);
    if (ran == 0) {
        std::fprintf(stderr, "%s: no inputs found: the corpus is missing\n", argv[0]);
        return 1;
    }
    return 0;
}
