#pragma once

#include "common/errorcode.h"

#include <optional>
#include <utility>
#include <variant>

#include <QString>

namespace cloop {

// An expected failure: a stable machine-readable code and a message for a
// person. Codes are snake_case strings because they cross the wire and the
// admin API unchanged.
struct Error
{
    QString code;
    QString message;
    // A permanent error will not go away by retrying (a revoked credential,
    // a malformed bundle); transient ones (a hub restarting) may.
    bool permanent = false;

    static Error make(QString code, QString message, bool permanent = false)
    {
        return Error { std::move(code), std::move(message), permanent };
    }
    static Error make(ErrorCode code, QString message, bool permanent = false)
    {
        return Error { QString(errorCodeName(code)), std::move(message), permanent };
    }

    // Whether this is that error; the code itself stays text for the wire.
    bool is(ErrorCode other) const { return code == errorCodeName(other); }
};

// std::expected is C++23; this is the small subset the project needs.
template <typename T> class [[nodiscard]] Result
{
public:
    Result(T value)
        : m_value(std::move(value))
    { }
    Result(Error error)
        : m_value(std::move(error))
    { }

    bool ok() const { return std::holds_alternative<T>(m_value); }
    explicit operator bool() const { return ok(); }

    T &value() & { return std::get<T>(m_value); }
    const T &value() const & { return std::get<T>(m_value); }
    T &&value() && { return std::get<T>(std::move(m_value)); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }

    const Error &error() const { return std::get<Error>(m_value); }

private:
    std::variant<T, Error> m_value;
};

template <> class [[nodiscard]] Result<void>
{
public:
    Result() = default;
    Result(Error error)
        : m_error(std::move(error))
    { }

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const Error &error() const { return *m_error; }

private:
    std::optional<Error> m_error;
};

using Status = Result<void>;

} // namespace cloop
